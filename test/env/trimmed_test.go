package env

import (
	"slices"
	"strings"
	"testing"
)

func TestTrimmedMembers(t *testing.T) {
	t.Parallel()
	got := TrimmedMembers(4, 6)
	var names []string
	for _, m := range got {
		names = append(names, m.Name)
		if !m.Trimmed || m.Nodes.Count != 1 {
			t.Errorf("%s: trimmed %v with %d nodes, want trimmed with 1", m.Name, m.Trimmed, m.Nodes.Count)
		}
	}
	if want := []string{"member4", "member5", "member6"}; !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	if got := TrimmedMembers(4, 3); len(got) != 0 {
		t.Errorf("TrimmedMembers(4, 3) = %v, want none", got)
	}
}

func TestTrimmedMemberNodeCount(t *testing.T) {
	t.Parallel()
	o := Options{BinDir: binDirWithEverything(t), StateDir: "s", Members: []MemberOptions{
		{Name: "full"}, {Name: "trimmed", Trimmed: true}, {Name: "trimmed-3", Trimmed: true, Nodes: NodeOptions{Count: 3}},
	}}
	if err := o.complete(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 1, 3} {
		if got := o.Members[i].Nodes.Count; got != want {
			t.Errorf("%s: %d nodes, want %d", o.Members[i].Name, got, want)
		}
	}
}

// The trimming flags go to trimmed members only, and the controllers a
// trimmed member runs are the ones it names.
func TestTrimmedFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		cluster     Cluster
		trimmed     bool
		controllers string
	}{
		{"host", Cluster{Name: "host", Role: RoleHost}, false, strings.Join(hostControllers, ",")},
		{"member", Cluster{Name: "m1", Role: RoleMember}, false, ""},
		{"trimmed member", Cluster{Name: "m4", Role: RoleMember, Trimmed: true}, true, "serviceaccount-token-controller,namespace-controller"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := tc.cluster.apiserverArgs("http://127.0.0.1:1")
			for _, flag := range trimmedAPIServerArgs() {
				if got := slices.Contains(api, flag); got != tc.trimmed {
					t.Errorf("%s in the kube-apiserver flags: %v, want %v", flag, got, tc.trimmed)
				}
			}
			if !slices.Contains(api, "--etcd-prefix=/"+tc.cluster.Name+"/registry") {
				t.Errorf("kube-apiserver flags %v: no etcd prefix of its own", api)
			}
			var controllers string
			for _, a := range tc.cluster.kcmArgs() {
				if v, ok := strings.CutPrefix(a, "--controllers="); ok {
					controllers = v
				}
			}
			if controllers != tc.controllers {
				t.Errorf("kube-controller-manager --controllers=%q, want %q", controllers, tc.controllers)
			}
		})
	}
}

// A trimmed member keeps NamespaceLifecycle: nothing is created in a
// namespace being deleted.
func TestTrimmedAdmissionKeepsNamespaceLifecycle(t *testing.T) {
	t.Parallel()
	if slices.Contains(trimmedAdmissionPlugins, "NamespaceLifecycle") {
		t.Error("NamespaceLifecycle is disabled")
	}
	if s := slices.Sorted(slices.Values(trimmedAdmissionPlugins)); len(slices.Compact(s)) != len(trimmedAdmissionPlugins) {
		t.Errorf("a plugin is named twice: %v", trimmedAdmissionPlugins)
	}
}
