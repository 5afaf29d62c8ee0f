package app

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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
		{[]string{"addons", "enable", "karmada-descheduler"}, "--controllers=*,descheduler"},
		{[]string{"rollout", "approve", "deployment/nginx", "--gate=Middle"}, `--gate must be Before or After, not "Middle"`},
		{[]string{"rollout", "status"}, "accepts between 1 and 2 arg(s)"},
		{[]string{"rollout", "undo", "deployment", "nginx", "extra"}, "accepts between 1 and 2 arg(s)"},
	} {
		cmd := NewCommand("flotillactl")
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(tc.args)
		mustContain(t, cmd.Execute(), tc.want)
	}
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

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

// TestRolloutCommand: kubectl rollout's verbs and flags, plus approve.
func TestRolloutCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		flag, want string
	}{
		{[]string{"rollout", "status", "deployment/nginx"}, "watch", "true"},
		{[]string{"rollout", "status", "deployment/nginx", "-w=false"}, "watch", "false"},
		{[]string{"rollout", "status", "deployment/nginx", "--timeout=5m"}, "timeout", "5m0s"},
		{[]string{"rollout", "history", "deployment/nginx", "--revision=3"}, "revision", "3"},
		{[]string{"rollout", "undo", "deploy/nginx", "--to-revision=2"}, "to-revision", "2"},
		{[]string{"rollout", "approve", "deployment/nginx", "--stage=canary"}, "stage", "canary"},
		{[]string{"rollout", "approve", "deployment/nginx", "--gate=After"}, "gate", "After"},
		{[]string{"rollout", "pause", "deployment/nginx", "-n", "web"}, "namespace", "web"},
		{[]string{"rollout", "resume", "deployment", "nginx"}, "kubeconfig", ""},
		{[]string{"rollout", "abort", "deployment/nginx", "--kubeconfig=k"}, "kubeconfig", "k"},
	} {
		sub, rest, err := NewCommand("flotillactl").Find(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if want := tc.args[1]; sub.Name() != want {
			t.Errorf("%v: command %q, want %q", tc.args, sub.Name(), want)
		}
		if err := sub.ParseFlags(rest); err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if got := sub.Flags().Lookup(tc.flag).Value.String(); got != tc.want {
			t.Errorf("%v: --%s = %q, want %q", tc.args, tc.flag, got, tc.want)
		}
	}
}

// kubectl flotilla console is the console command, with its flags and the
// plugin's name in its help.
func TestConsoleCommand(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	cmd := NewCommand("kubectl-flotilla")
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"console", "--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kubectl flotilla console --port 8001 --open", "--login", "--address string", "127.0.0.1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console help lacks %q:\n%s", want, out.String())
		}
	}
}
