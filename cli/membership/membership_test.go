package membership

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	karmadafake "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
)

func TestMemberFlagsValidate(t *testing.T) {
	t.Parallel()
	valid := memberFlags{cluster: "member1", namespaceFlag: "--agent-namespace", namespace: "karmada-system", timeoutFlag: "--timeout", timeout: time.Second}
	for _, tc := range []struct {
		name   string
		mutate func(*memberFlags)
		want   []string // one substring per error, in order
	}{
		{name: "valid", mutate: func(*memberFlags) {}},
		{name: "bad name", mutate: func(f *memberFlags) { f.cluster = "Member_1" }, want: []string{`invalid cluster name "Member_1"`}},
		{name: "long name", mutate: func(f *memberFlags) { f.cluster = strings.Repeat("a", 49) }, want: []string{"no more than 48"}},
		{name: "empty name", mutate: func(f *memberFlags) { f.cluster = "" }, want: []string{"invalid cluster name"}},
		{name: "bad namespace names its flag", mutate: func(f *memberFlags) { f.namespace = "Karmada" }, want: []string{`invalid --agent-namespace "Karmada"`}},
		{name: "zero timeout", mutate: func(f *memberFlags) { f.timeout = 0 }, want: []string{"--timeout must be positive"}},
		{name: "timeout not checked without its flag", mutate: func(f *memberFlags) { f.timeoutFlag, f.timeout = "", 0 }},
		{name: "all at once", mutate: func(f *memberFlags) { f.cluster, f.namespace, f.timeout = "A", "", -time.Second },
			want: []string{"invalid cluster name", "invalid --agent-namespace", "--timeout must be positive"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := valid
			tc.mutate(&f)
			errs := f.validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d", errs, len(tc.want))
			}
			for i, want := range tc.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], want)
				}
			}
		})
	}
}

func TestCheckIdentity(t *testing.T) {
	t.Parallel()
	const self = "uid-self"
	cluster := func(mode clusterv1alpha1.ClusterSyncMode, id string) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: mode, ID: id}}
	}
	deleting := func(c *clusterv1alpha1.Cluster) *clusterv1alpha1.Cluster {
		c.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
		return c
	}
	push, pull := clusterv1alpha1.Push, clusterv1alpha1.Pull
	for _, tc := range []struct {
		name   string
		action memberAction
		ident  memberIdentity
		want   string // "" allowed; else a substring of the error
	}{
		// join
		{name: "join new", action: joinAction, ident: memberIdentity{id: self}},
		{name: "join again", action: joinAction, ident: memberIdentity{id: self, existing: cluster(push, self)}},
		{name: "join adopts a Cluster without id", action: joinAction, ident: memberIdentity{id: self, existing: cluster(push, "")}},
		{name: "join another member's name", action: joinAction, ident: memberIdentity{id: self, existing: cluster(push, "uid-other")},
			want: `cluster m1 is already registered for another member (id "uid-other"; this member's kube-system uid is uid-self); unjoin it first, pick another name, or pass --force to take it over`},
		{name: "join a Pull cluster", action: joinAction, ident: memberIdentity{id: self, existing: cluster(pull, self)},
			want: "cluster m1 is registered in Pull mode; unregister it first or pass --force to switch it to Push"},
		{name: "join while deleting", action: joinAction, ident: memberIdentity{id: self, existing: deleting(cluster(push, self))},
			want: "is being deleted"},
		{name: "join under a second name", action: joinAction, ident: memberIdentity{id: self, sameID: []string{"a", "b"}},
			want: "this member (id uid-self) is already registered as cluster a, b; unjoin it first or pass --force"},
		{name: "join --force takes over", action: joinAction.withForce(true), ident: memberIdentity{id: self, existing: cluster(pull, "uid-other"), sameID: []string{"a"}}},

		// unjoin
		{name: "unjoin", action: unjoinAction, ident: memberIdentity{id: self, existing: cluster(push, self)}},
		{name: "unjoin without the member", action: unjoinAction, ident: memberIdentity{existing: cluster(push, "uid-other")}},
		{name: "unjoin gone", action: unjoinAction, ident: memberIdentity{id: self}},
		{name: "unjoin while deleting", action: unjoinAction, ident: memberIdentity{id: self, existing: deleting(cluster(push, self))}},
		{name: "unjoin another member", action: unjoinAction, ident: memberIdentity{id: self, existing: cluster(push, "uid-other")},
			want: "the member kubeconfig points at a cluster with kube-system uid uid-self, but cluster m1 has id uid-other; nothing was deleted (pass --force to unjoin this member anyway)"},
		{name: "unjoin a Pull cluster", action: unjoinAction, ident: memberIdentity{existing: cluster(pull, self)},
			want: "cluster m1 is registered in Pull mode: use unregister (or --force); nothing was deleted"},
		{name: "unjoin --force", action: unjoinAction.withForce(true), ident: memberIdentity{id: self, existing: cluster(pull, "uid-other")}},

		// register (its --force does not skip the check)
		{name: "register new", action: registerAction, ident: memberIdentity{id: self}},
		{name: "register again", action: registerAction, ident: memberIdentity{id: self, existing: cluster(pull, self)}},
		{name: "register over a Cluster without id", action: registerAction.withForce(true), ident: memberIdentity{id: self, existing: cluster(pull, "")},
			want: `cluster m1 is already registered for another member (id ""; this member's kube-system uid is uid-self); unregister it first, pick another name`},
		{name: "register another member's name", action: registerAction.withForce(true), ident: memberIdentity{id: self, existing: cluster(pull, "uid-other")},
			want: "already registered for another member"},
		{name: "register a Push cluster", action: registerAction, ident: memberIdentity{id: self, existing: cluster(push, self)},
			want: "cluster m1 is registered in Push mode; unjoin it first"},
		{name: "register under a second name", action: registerAction, ident: memberIdentity{id: self, sameID: []string{"edge"}},
			want: "already registered as cluster edge; unregister it first"},

		// unregister
		{name: "unregister", action: unregisterAction, ident: memberIdentity{id: self, existing: cluster(pull, self)}},
		{name: "unregister a Cluster without id", action: unregisterAction, ident: memberIdentity{id: self, existing: cluster(pull, "")}},
		{name: "unregister a Push cluster", action: unregisterAction, ident: memberIdentity{id: self, existing: cluster(push, self)},
			want: "use unjoin (or --force); nothing was deleted"},
		{name: "unregister another member", action: unregisterAction, ident: memberIdentity{id: self, existing: cluster(pull, "uid-other")},
			want: "has id uid-other; nothing was deleted (pass --force to unregister this member anyway)"},
		{name: "unregister --force", action: unregisterAction.withForce(true), ident: memberIdentity{id: self, existing: cluster(push, "uid-other")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.action.checkIdentity("m1", tc.ident)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if err != nil && !tc.action.forceable && strings.Contains(err.Error(), "--force") {
				t.Errorf("%s has no --force that skips the check, yet the error suggests it: %v", tc.action.verb, err)
			}
		})
	}
}

func TestReadIdentity(t *testing.T) {
	t.Parallel()
	other := func(name, id string) runtime.Object {
		return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{ID: id, SyncMode: clusterv1alpha1.Push}}
	}
	for _, tc := range []struct {
		name     string
		action   memberAction
		clusters []runtime.Object
		noMember bool
		want     memberIdentity // existing compared by presence
		exists   bool
	}{
		{name: "join lists the member's other names", action: joinAction,
			clusters: []runtime.Object{other("member1", testMemberUID), other("z", testMemberUID), other("a", testMemberUID), other("b", "x")},
			want:     memberIdentity{id: testMemberUID, sameID: []string{"a", "z"}}, exists: true},
		{name: "join --force lists nothing", action: joinAction.withForce(true), clusters: []runtime.Object{other("a", testMemberUID)},
			want: memberIdentity{id: testMemberUID}},
		{name: "unjoin of a gone Cluster reads no id", action: unjoinAction, want: memberIdentity{}},
		{name: "unjoin reads the id to compare", action: unjoinAction, clusters: []runtime.Object{other("member1", "x")},
			want: memberIdentity{id: testMemberUID}, exists: true},
		{name: "unjoin of a Cluster without id reads none", action: unjoinAction, clusters: []runtime.Object{other("member1", "")},
			want: memberIdentity{}, exists: true},
		{name: "unjoin without the member", action: unjoinAction, clusters: []runtime.Object{other("member1", "x")}, noMember: true,
			want: memberIdentity{}, exists: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tokensOnCreate, nil)
			member := e.m.kube
			if tc.noMember {
				member = nil
			}
			got, err := tc.action.readIdentity(t.Context(), karmadafake.NewSimpleClientset(tc.clusters...), "member1", member)
			if err != nil {
				t.Fatal(err)
			}
			if (got.existing != nil) != tc.exists || got.id != tc.want.id || strings.Join(got.sameID, ",") != strings.Join(tc.want.sameID, ",") {
				t.Errorf("identity {id %q existing %v sameID %v}, want {id %q existing %v sameID %v}", got.id, got.existing != nil, got.sameID, tc.want.id, tc.exists, tc.want.sameID)
			}
		})
	}
}
