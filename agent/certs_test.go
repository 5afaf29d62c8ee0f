package agent

// Test fixtures of the rotation tests: a CA, agent certificates and kubeconfigs.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/flotilla-io/flotilla/names"
)

const testCluster = "member3"

// testCA signs client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serials atomic.Int64

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serials.Add(1)), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// sign issues a client certificate for pub.
func (ca *testCA) sign(t *testing.T, subject pkix.Name, pub any, notBefore, notAfter time.Time) (*x509.Certificate, []byte) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serials.Add(1)), Subject: subject, NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// issue returns a new key and a certificate for subject.
func (ca *testCA) issue(t *testing.T, subject pkix.Name, notBefore, notAfter time.Time) (cert *x509.Certificate, certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, certPEM = ca.sign(t, subject, &key.PublicKey, notBefore, notAfter)
	return cert, certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func agentSubject() pkix.Name {
	return pkix.Name{CommonName: names.AgentUserName(testCluster), Organization: []string{names.AgentsGroup}}
}

// agentKubeconfig is a kubeconfig as flotillactl register writes it.
func agentKubeconfig(t *testing.T, server string, ca, certPEM, keyPEM []byte) []byte {
	t.Helper()
	user := names.AgentUserName(testCluster)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["karmada-apiserver"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["karmada-apiserver"] = &clientcmdapi.Context{Cluster: "karmada-apiserver", AuthInfo: user}
	cfg.CurrentContext = "karmada-apiserver"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// writeKubeconfig writes data as dir/agent.kubeconfig and returns the options
// of an agent using it.
func writeKubeconfig(t *testing.T, dir string, data []byte) *Options {
	t.Helper()
	path := filepath.Join(dir, "agent.kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.ClusterName, o.ControlPlaneKubeconfig = testCluster, path
	return o
}

// rotationFor builds the control-plane configuration of o as Options.Config does.
func rotationFor(t *testing.T, o *Options) (*certRotation, *rest.Config) {
	t.Helper()
	cp, err := clientcmd.BuildConfigFromFlags("", o.ControlPlaneKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	r, cfg, err := newCertRotation(o, cp)
	if err != nil {
		t.Fatalf("newCertRotation: %v", err)
	}
	return r, cfg
}

func storeLeaf(t *testing.T, r *certRotation) *x509.Certificate {
	t.Helper()
	cur, err := r.store.Current()
	if err != nil {
		t.Fatalf("store: %v", err)
	}
	return cur.Leaf
}
