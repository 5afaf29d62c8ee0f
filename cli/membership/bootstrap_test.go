package membership

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/cluster-bootstrap/token/jws"
)

// newTestCA returns a self-signed CA and a leaf it issued, PEM-encoded.
func newTestCA(t *testing.T) (ca *x509.Certificate, caPEM, leafPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	if ca, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "leaf"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, leafKey.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
}

// testCAPEM and its pin were made with openssl:
//
//	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=test-ca ...
//	openssl x509 -pubkey -noout -in c.pem | openssl pkey -pubin -outform der | sha256sum
const (
	testCAPEM = `-----BEGIN CERTIFICATE-----
MIIBeDCCAR+gAwIBAgIUKBMS2c8hUWtSKtjbqxKZ2R/KK3QwCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHdGVzdC1jYTAeFw0yNjExMjUwNzMzNThaFw0zNjExMjIwNzMz
NThaMBIxEDAOBgNVBAMMB3Rlc3QtY2EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AASBBp9H6TEHB5Qw8xEk0gFjhbDDE7//8pVA3451FLow/QVTYLccBv9hibd5c5lb
LHihZoZl8NXI+k0IPwpbMtWOo1MwUTAdBgNVHQ4EFgQUb4Ix7a2xr56OJtXpUZv/
tQdejGYwHwYDVR0jBBgwFoAUb4Ix7a2xr56OJtXpUZv/tQdejGYwDwYDVR0TAQH/
BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiAP+tmpcR2Pg00kbYGWhKhXOvs97dQk
SejuOavxgSATzwIgUIgYSTeTrCtOaQLnLrXHDg9hHK8bjHZhiR/Nhnn2sEQ=
-----END CERTIFICATE-----
`
	testCAHash = "sha256:2be6f215397a7fbe0183995e3809ffcd60ba9f6d41f7a47a305588f834287f05"
)

func TestCACertHash(t *testing.T) {
	t.Parallel()
	certs, err := certutil.ParseCertsPEM([]byte(testCAPEM))
	if err != nil {
		t.Fatal(err)
	}
	if got := caCertHash(certs[0]); got != testCAHash {
		t.Errorf("hash %s, want openssl's %s", got, testCAHash)
	}
	if got, err := registerCAHash([]byte(testCAPEM)); err != nil || got != testCAHash {
		t.Errorf("registerCAHash = %s, %v", got, err)
	}

	// A bundle: the CA is found among other certificates, a leaf first.
	ca, caPEM, leafPEM := newTestCA(t)
	bundle := append(append(append([]byte{}, leafPEM...), []byte(testCAPEM)...), caPEM...)
	certs, err = certutil.ParseCertsPEM(bundle)
	if err != nil || len(certs) != 3 {
		t.Fatalf("bundle: %d certificates, %v", len(certs), err)
	}
	if got, _ := registerCAHash(bundle); got != testCAHash {
		t.Errorf("registerCAHash of a bundle = %s, want the first CA's %s", got, testCAHash)
	}
	pub, err := x509.MarshalPKIXPublicKey(ca.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pub)
	otherHash := "sha256:" + hex.EncodeToString(sum[:])
	if c, ok := matchingCA(certs, []string{"sha256:" + strings.Repeat("0", 64), strings.ToUpper(otherHash[:7]) + otherHash[7:]}); !ok || c != certs[2] {
		t.Errorf("matchingCA did not find the second CA by its pin")
	}
	if _, ok := matchingCA(certs, []string{"sha256:" + strings.Repeat("0", 64)}); ok {
		t.Error("matchingCA matched a wrong pin")
	}
}

func TestValidateCAHashes(t *testing.T) {
	t.Parallel()
	if err := validateCAHashes([]string{testCAHash}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"2be6f2", "sha1:" + strings.Repeat("a", 40), "sha256:" + strings.Repeat("g", 64), "sha256:" + strings.Repeat("a", 63)} {
		if err := validateCAHashes([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestTokenFormat(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 50 {
		tok, err := generateToken()
		if err != nil {
			t.Fatal(err)
		}
		id, secret, err := parseToken(tok)
		if err != nil || len(id) != 6 || len(secret) != 16 || tok != id+"."+secret {
			t.Fatalf("generated %q: id %q secret %q err %v", tok, id, secret, err)
		}
		if seen[tok] {
			t.Fatalf("token %q generated twice", tok)
		}
		seen[tok] = true
	}
	for _, bad := range []string{"", "abcdef", "abcdef.0123456789abcde", "ABCDEF.0123456789abcdef", "abcdef:0123456789abcdef", "abcdef.0123456789abcdef.x"} {
		if _, _, err := parseToken(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestClusterInfoSignature(t *testing.T) {
	t.Parallel()
	content := "apiVersion: v1\nkind: Config\n"
	// Computed independently (Python hmac) for header {"alg":"HS256","kid":"abcdef"},
	// the header the bootstrap signer (go-jose) writes.
	const want = "eyJhbGciOiJIUzI1NiIsImtpZCI6ImFiY2RlZiJ9..vH_kT4yiol-nrAWgjfCYqvum5wsKETXe0S7OOp1VgnE"
	if got, err := jws.ComputeDetachedSignature(content, "abcdef", "0123456789abcdef"); err != nil || got != want {
		t.Fatalf("signature %s, %v, want %s", got, err, want)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "cluster-info"},
		Data: map[string]string{"kubeconfig": content, "jws-kubeconfig-abcdef": want}}
	if err := verifyClusterInfo(cm, "abcdef", "0123456789abcdef"); err != nil {
		t.Errorf("valid signature: %v", err)
	}
	if err := verifyClusterInfo(cm, "abcdef", "0123456789abcdeX"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("wrong secret: %v", err)
	}
	if err := verifyClusterInfo(cm, "zzzzzz", "0123456789abcdef"); err != errNoSignature {
		t.Errorf("unknown token id: %v", err)
	}
	tampered := cm.DeepCopy()
	tampered.Data["kubeconfig"] += "# changed\n"
	if err := verifyClusterInfo(tampered, "abcdef", "0123456789abcdef"); err == nil {
		t.Error("tampered content verified")
	}
	wrongKid := cm.DeepCopy()
	wrongKid.Data["jws-kubeconfig-abcdef"] = mustSign(t, content, "zzzzzz", "0123456789abcdef")
	if err := verifyClusterInfo(wrongKid, "abcdef", "0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("signature with another key id: %v", err)
	}
}

// mustSign is the bootstrap signer's detached JWS of content for a token.
func mustSign(t *testing.T, content, tokenID, tokenSecret string) string {
	t.Helper()
	sig, err := jws.ComputeDetachedSignature(content, tokenID, tokenSecret)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}
