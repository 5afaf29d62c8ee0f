package env

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestCAIssuesVerifiableCertificates(t *testing.T) {
	t.Parallel()
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewCA("other-ca")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		req       CertRequest
		wantUsage []x509.ExtKeyUsage
	}{
		{"client", CertRequest{CommonName: "admin", Organizations: []string{"system:masters"}}, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{"serving", CertRequest{CommonName: "api", DNSNames: []string{"echo.default.svc"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}},
			[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			kp, err := ca.Issue(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
			if err != nil {
				t.Fatalf("certificate and key do not match: %v", err)
			}
			cert, err := x509.ParseCertificate(pair.Certificate[0])
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject.CommonName != tc.req.CommonName || !slices.Equal(cert.Subject.Organization, tc.req.Organizations) {
				t.Errorf("subject %v, want CN=%s O=%v", cert.Subject, tc.req.CommonName, tc.req.Organizations)
			}
			if !slices.Equal(cert.ExtKeyUsage, tc.wantUsage) {
				t.Errorf("ext key usage %v, want %v", cert.ExtKeyUsage, tc.wantUsage)
			}
			roots := x509.NewCertPool()
			roots.AddCert(ca.Cert)
			opts := x509.VerifyOptions{Roots: roots, KeyUsages: tc.wantUsage}
			if len(tc.req.DNSNames) > 0 {
				opts.DNSName = tc.req.DNSNames[0]
			}
			if _, err := cert.Verify(opts); err != nil {
				t.Errorf("does not verify against its CA: %v", err)
			}
			wrong := x509.NewCertPool()
			wrong.AddCert(other.Cert)
			opts.Roots = wrong
			if _, err := cert.Verify(opts); err == nil {
				t.Error("verifies against an unrelated CA")
			}
		})
	}
}

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, err := NewCA("ca")
	if err != nil {
		t.Fatal(err)
	}
	if err := ca.WriteFiles(dir, "ca"); err != nil {
		t.Fatal(err)
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")); err != nil {
		t.Errorf("CA files do not load as a key pair: %v", err)
	}
	if err := WriteSigningKey(dir, "sa"); err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(filepath.Join(dir, "sa.pub"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pub)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("sa.pub is not a PEM public key: %q", pub)
	}
	if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
		t.Error(err)
	}
	if st, err := os.Stat(filepath.Join(dir, "sa.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("sa.key mode: %v %v, want 0600", st.Mode(), err)
	}
}
