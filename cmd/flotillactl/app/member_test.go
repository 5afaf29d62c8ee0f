package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
)

// TestMemberCommandsHelp builds every kubectl-like command (get, describe,
// logs, exec, top, ...) and version, options and completion, and prints its
// help: flags that clash (kubectl's -s, --cluster) would panic, and each
// names the flags that choose its target.
func TestMemberCommandsHelp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"logs"}, []string{"-C, --cluster", "--tail", "kubectl flotilla logs nginx -C member1"}},
		{[]string{"exec"}, []string{"-C, --cluster", "--stdin", "kubectl flotilla exec mypod -C member1 -- date"}},
		{[]string{"get"}, []string{"-s, --operation-scope", "-C, --clusters", "--server string", "--watch"}},
		{[]string{"describe"}, []string{"-s, --operation-scope", "-C, --clusters", "--server string"}},
		{[]string{"attach"}, []string{"-s, --operation-scope", "-C, --cluster", "--server string"}},
		{[]string{"api-resources"}, []string{"-s, --operation-scope", "-C, --cluster", "--api-group"}},
		{[]string{"api-versions"}, []string{"-s, --operation-scope", "-C, --cluster"}},
		{[]string{"explain"}, []string{"-s, --operation-scope", "-C, --cluster", "--recursive"}},
		{[]string{"create"}, []string{"-s, --operation-scope", "-C, --cluster", "--filename"}},
		{[]string{"create", "configmap"}, []string{"-s, --operation-scope", "-C, --cluster", "--from-literal"}},
		{[]string{"delete"}, []string{"-s, --operation-scope", "-C, --cluster", "--cascade"}},
		{[]string{"edit"}, []string{"-s, --operation-scope", "-C, --cluster"}},
		{[]string{"label"}, []string{"-s, --operation-scope", "-C, --cluster", "--overwrite"}},
		{[]string{"annotate"}, []string{"-s, --operation-scope", "-C, --cluster", "--overwrite"}},
		{[]string{"patch"}, []string{"-s, --operation-scope", "-C, --cluster", "--type"}},
		{[]string{"top", "pod"}, []string{"-C, --clusters", "--containers", "--sum"}},
		{[]string{"top", "node"}, []string{"-C, --clusters", "--show-capacity"}},
		{[]string{"version"}, []string{"--client", "--output"}},
		{[]string{"options"}, []string{"The following options can be passed to any command", "--kubeconfig=''", "-v, --v=0", "--karmada-context"}},
		{[]string{"completion"}, []string{"bash", "zsh", "fish", "powershell"}},
	} {
		var out bytes.Buffer
		cmd := NewCommand("kubectl-flotilla")
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		args := tc.args
		if args[0] != "options" { // options prints the global flags, its help nothing
			args = append(args, "--help")
		}
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Errorf("%v --help: %v", tc.args, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v --help does not mention %q:\n%s", tc.args, w, out.String())
			}
		}
	}
}

// TestMemberCommandTargetErrors: the flags that choose a target are
// checked before anything is asked of a server.
func TestMemberCommandTargetErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "web"}, "must specify a cluster: -C/--cluster"},
		{[]string{"exec", "web", "--", "date"}, "must specify a cluster"},
		{[]string{"api-resources", "--operation-scope=members"}, "must specify a member cluster"},
		{[]string{"explain", "pods", "-s", "karmada", "-C", "member1"}, "drop -C/--cluster=member1"},
		{[]string{"label", "-s", "all", "-C", "member1", "pod", "web", "a=b"}, `invalid --operation-scope "all"`},
		{[]string{"create", "configmap", "x", "-s", "members"}, "must specify a member cluster"},
		{[]string{"top", "pod", "--sort-by=name", "--server=https://127.0.0.1:1"}, "--sort-by accepts only cpu or memory"},
		{[]string{"version", "-o", "table", "--client"}, "--output must be 'yaml' or 'json'"},
	} {
		cmd := NewCommand("flotillactl")
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(tc.args)
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestCompletionArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		invokedAs string
		args      []string
		want      []string
	}{
		{"flotillactl", []string{"logs", "-C"}, []string{"logs", "-C"}},
		{"kubectl-flotilla", []string{"get"}, []string{"get"}},
		{"kubectl_complete-flotilla", []string{"lo"}, []string{cobra.ShellCompRequestCmd, "lo"}},
		{"kubectl_complete-flotilla.exe", []string{""}, []string{cobra.ShellCompRequestCmd, ""}},
	} {
		if got := CompletionArgs(tc.invokedAs, tc.args); !cmp.Equal(got, tc.want) {
			t.Errorf("CompletionArgs(%q, %q) = %q, want %q", tc.invokedAs, tc.args, got, tc.want)
		}
	}
	// kubectl runs kubectl_complete-flotilla to complete "kubectl flotilla ".
	var out bytes.Buffer
	cmd := NewCommand("kubectl_complete-flotilla")
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(CompletionArgs("kubectl_complete-flotilla", []string{"lo"}))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "logs\t") || cmd.Use != "kubectl-flotilla" {
		t.Errorf("completing %q as %s: %q", "lo", cmd.Use, out.String())
	}
}

// TestSelectionAliases: karmadactl's names share the value of flotillactl's
// flags: describe's --cluster adds to -C, get's --labels is --selector.
func TestSelectionAliases(t *testing.T) {
	t.Parallel()
	describe := newDescribeCommand(newControlPlaneFlags(), "flotillactl")
	if err := describe.Flags().Parse([]string{"-C", "member1", "--cluster", "member2"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := describe.Flags().GetStringSlice("clusters"); strings.Join(got, ",") != "member1,member2" {
		t.Errorf("describe -C member1 --cluster member2: clusters %v, want both", got)
	}
	get := newGetCommand(newControlPlaneFlags(), "flotillactl")
	if err := get.Flags().Parse([]string{"--labels", "app=web"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := get.Flags().GetString("selector"); got != "app=web" {
		t.Errorf("get --labels app=web: selector %q", got)
	}
}
