package clusterproxy

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		scoped   bool
		scope    Scope
		scopeSet bool
		cluster  string
		want     string
		wantErr  string
	}{
		{name: "member command with -C", cluster: "member1", want: "member1"},
		{name: "member command without -C", wantErr: "must specify a cluster"},
		{name: "default scope", scoped: true, scope: ScopeKarmada, want: ""},
		{name: "-C alone implies members", scoped: true, scope: ScopeKarmada, cluster: "member2", want: "member2"},
		{name: "explicit karmada", scoped: true, scope: ScopeKarmada, scopeSet: true, want: ""},
		{name: "explicit karmada with -C", scoped: true, scope: ScopeKarmada, scopeSet: true, cluster: "member2", wantErr: "drop -C/--cluster=member2"},
		{name: "members with -C", scoped: true, scope: ScopeMembers, scopeSet: true, cluster: "member3", want: "member3"},
		{name: "members without -C", scoped: true, scope: ScopeMembers, scopeSet: true, wantErr: "must specify a member cluster"},
		{name: "all", scoped: true, scope: ScopeAll, scopeSet: true, cluster: "member1", wantErr: `invalid --operation-scope "all"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Target(tc.scoped, tc.scope, tc.scopeSet, tc.cluster)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Target() = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Target() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestFlags parses command lines with the flags and checks the target and
// that kubectl's --server keeps working without its -s.
func TestFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args       []string
		member     bool
		want       string
		wantServer string
		wantErr    string
	}{
		{args: nil, want: ""},
		{args: []string{"-s", "members", "-C", "member1"}, want: "member1"},
		{args: []string{"--operation-scope=members", "--cluster=member2"}, want: "member2"},
		{args: []string{"-C", "member3"}, want: "member3"},
		{args: []string{"-s", "karmada", "-C", "member3"}, wantErr: "drop -C"},
		{args: []string{"-s", "everywhere"}, wantErr: "must be one of karmada, members, all"},
		{args: []string{"--server=https://cp:6443"}, want: "", wantServer: "https://cp:6443"},
		{args: []string{"-C", "member1"}, member: true, want: "member1"},
		{args: nil, member: true, wantErr: "must specify a cluster"},
	} {
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		var f Flags
		cp := genericclioptions.NewConfigFlags(true)
		if tc.member {
			f.AddMemberFlags(fs)
		} else {
			f.AddScopeFlags(fs, cp)
		}
		err := fs.Parse(tc.args)
		var got string
		if err == nil {
			got, err = f.Target()
		}
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %q, %v; want an error containing %q", tc.args, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.args, got, err, tc.want)
		}
		if *cp.APIServer != tc.wantServer {
			t.Errorf("%v: --server %q, want %q", tc.args, *cp.APIServer, tc.wantServer)
		}
	}
}

func TestNameCluster(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ msg, want string }{
		{`Error from server (NotFound): pods "ghost" not found`, `Error from server (NotFound): cluster(member2): pods "ghost" not found`},
		{`Error from server: etcdserver: request timed out`, `Error from server: cluster(member2): etcdserver: request timed out`},
		{"error: must specify a container", "error: cluster(member2): must specify a container"},
		{"The request is invalid: spec: Required value", "cluster(member2): The request is invalid: spec: Required value"},
		{"Error from server\nmore): x", "cluster(member2): Error from server\nmore): x"},
		{"", ""},
	} {
		if got := NameCluster(tc.msg, "member2"); got != tc.want {
			t.Errorf("NameCluster(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
