package names

import "testing"

func TestNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  string
		want string
	}{
		// Deployment default/nginx hashes to 2439396529 (docs/compatibility.md,
		// Names).
		{"work name of a namespaced template", WorkName("Deployment", "nginx", "default"), "nginx-687f7fb96f"},
		{"binding name", BindingName("Deployment", "nginx"), "nginx-deployment"},
		{"binding name with a colon", BindingName("ClusterRole", "system:aggregate"), "system.aggregate-clusterrole"},
		{"execution namespace", ExecutionNamespace("member1"), "karmada-es-member1"},
		{"derived service", DerivedServiceName("nginx"), "derived-nginx"},
		{"imported endpoint slice", ImportedEndpointSliceName("member1", "nginx-x7k2p"), "imported-member1-nginx-x7k2p"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
	// Cluster-scoped and namespaced templates of the same name differ.
	if WorkName("Namespace", "nginx", "") == WorkName("Namespace", "nginx", "default") {
		t.Error("namespace is not part of the hash")
	}
}

func TestBindingKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		namespace, name, key string
		cluster              bool
	}{{"default", "nginx-deployment", "rb/default/nginx-deployment", false}, {"", "ns-namespace", "crb/ns-namespace", true}} {
		if got := BindingKey(tc.namespace, tc.name); got != tc.key {
			t.Errorf("BindingKey(%q, %q) = %q, want %q", tc.namespace, tc.name, got, tc.key)
		}
		ns, name, cluster, ok := ParseBindingKey(tc.key)
		if !ok || ns != tc.namespace || name != tc.name || cluster != tc.cluster {
			t.Errorf("ParseBindingKey(%q) = %q %q %v %v", tc.key, ns, name, cluster, ok)
		}
	}
	for _, bad := range []string{"", "rb/", "rb/ns", "crb/", "pp/x"} {
		if _, _, _, ok := ParseBindingKey(bad); ok {
			t.Errorf("ParseBindingKey(%q) accepted", bad)
		}
	}
}
