package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	certutil "k8s.io/client-go/util/cert"
)

func TestNewCommandName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		invokedAs, use, display string
	}{
		{"flotillactl", "flotillactl", ""},
		{"kubectl-flotilla", "kubectl-flotilla", "kubectl flotilla"},
		{"kubectl-flotilla.exe", "kubectl-flotilla", "kubectl flotilla"},
		{"", "flotillactl", ""},
	} {
		cmd := NewCommand(tc.invokedAs)
		if cmd.Use != tc.use || cmd.Annotations[cobra.CommandDisplayNameAnnotation] != tc.display {
			t.Errorf("NewCommand(%q): Use %q display %q, want %q %q", tc.invokedAs, cmd.Use, cmd.Annotations[cobra.CommandDisplayNameAnnotation], tc.use, tc.display)
		}
	}
	var out bytes.Buffer
	cmd := NewCommand("kubectl-flotilla")
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"join", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kubectl flotilla join member1") {
		t.Errorf("plugin help does not use the plugin name:\n%s", out.String())
	}
}

func TestCommandLineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"join"}, "exactly one argument"},
		{[]string{"join", "member1"}, "--cluster-kubeconfig is required"},
		{[]string{"join", "member_1", "--cluster-kubeconfig=x"}, "invalid cluster name"},
		{[]string{"unjoin", "member1", "--timeout=0s"}, "--timeout must be positive"},
		{[]string{"taint", "nodes", "n1", "a:NoSchedule"}, "only clusters are supported"},
		{[]string{"cordon"}, "accepts 1 arg"},
		{[]string{"uncordon", "Member1"}, "invalid cluster name"},
	} {
		cmd := NewCommand("flotillactl")
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(tc.args)
		mustContain(t, cmd.Execute(), tc.want)
	}
}

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
