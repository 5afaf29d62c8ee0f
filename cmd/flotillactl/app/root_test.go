package app

import (
	"bytes"
	"fmt"
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
		{[]string{"unjoin", "member1", "--timeout=0s"}, "--wait must be positive"},
		{[]string{"unjoin", "member1", "--wait=soon"}, "neither a duration"},
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

// TestKarmadactlFlags: a runbook written for karmadactl parses: its flag
// names are accepted, set what flotillactl's own names set, and the ones
// that mean nothing here say so.
func TestKarmadactlFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		flag string // a flag whose value the karmadactl one must set
		want string
	}{
		{[]string{"unregister", "member3", "--cluster-kubeconfig=m.config", "--cluster-context=m"}, "kubeconfig", "m.config"},
		{[]string{"unregister", "member3", "--cluster-context=m"}, "context", "m"},
		{[]string{"unregister", "member3", "--karmada-config=k.config", "--karmada-context=k"}, "control-plane-kubeconfig", "k.config"},
		{[]string{"unregister", "member3", "-n", "agents"}, "agent-namespace", "agents"},
		{[]string{"unregister", "member3", "--wait=2m"}, "wait", "2m0s"},
		{[]string{"unregister", "member3", "--wait=false"}, "wait", "0s"},
		{[]string{"unjoin", "member1", "--wait", "90s"}, "wait", "1m30s"},
		{[]string{"register", "https://cp:6443", "-n", "agents"}, "agent-namespace", "agents"},
		{[]string{"register", "https://cp:6443", "--cluster-zones=a,b"}, "cluster-zones", "[a,b]"},
	} {
		cmd := NewCommand("flotillactl")
		sub, rest, err := cmd.Find(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err := sub.ParseFlags(rest); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if got := sub.Flags().Lookup(tc.flag).Value.String(); got != tc.want {
			t.Errorf("%v: --%s = %q, want %q", tc.args, tc.flag, got, tc.want)
		}
	}
	// Accepted and noted.
	cmd := NewCommand("flotillactl")
	sub, rest, _ := cmd.Find([]string{"register", "https://cp:6443", "--enable-cert-rotation", "--cluster-namespace=x"})
	if err := sub.ParseFlags(rest); err != nil {
		t.Fatal(err)
	}
	var notes []string
	noteIgnored(sub.Flags(), func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) })
	if len(notes) != 2 || !strings.Contains(strings.Join(notes, ""), "--enable-cert-rotation is ignored") {
		t.Errorf("notes %q, want one for each ignored flag set", notes)
	}
}
