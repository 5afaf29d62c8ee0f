package membership

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

func TestLoadMember(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caPEM, _, err := certutil.GenerateSelfSignedCertKey("member1-ca", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "members.config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster: {server: "https://m1.example:6443", certificate-authority: ca.crt, proxy-url: "socks5://proxy.example:1080"}
- name: c2
  cluster: {server: "https://m2.example:6443", insecure-skip-tls-verify: true}
contexts:
- name: member1
  context: {cluster: c1, user: u}
- name: other
  context: {cluster: c2, user: u}
current-context: other
users:
- name: u
  user: {token: abc}
`), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, cluster, context string
		endpoint, proxy        string
		ca                     []byte
		insecure               bool
		wantErr                string
	}{
		{name: "context named like the cluster", cluster: "member1",
			endpoint: "https://m1.example:6443", proxy: "socks5://proxy.example:1080", ca: caPEM},
		{name: "current context", cluster: "member2", endpoint: "https://m2.example:6443", insecure: true},
		{name: "explicit context wins", cluster: "member1", context: "other", endpoint: "https://m2.example:6443", insecure: true},
		{name: "unknown context", cluster: "member1", context: "nope", wantErr: `no context "nope"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := loadMember(kubeconfig, tc.context, tc.cluster)
			if tc.wantErr != "" {
				mustContain(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.endpoint != tc.endpoint || m.proxyURL != tc.proxy || m.insecure != tc.insecure || !bytes.Equal(m.caData, tc.ca) {
				t.Errorf("got endpoint %q proxy %q insecure %v ca %q", m.endpoint, m.proxyURL, m.insecure, m.caData)
			}
		})
	}

	_, err = loadMember(filepath.Join(dir, "missing"), "", "member1")
	mustContain(t, err, "loading the member kubeconfig")
}
