package apply

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/flotilla-io/flotilla/cli/policy"
)

func TestValidateTargets(t *testing.T) {
	t.Parallel()
	known := []string{"member1", "member2"}
	for _, tc := range []struct {
		name     string
		all      bool
		clusters []string
		known    []string
		want     string // "" for no error; else each line must appear
	}{
		{name: "neither: kubectl apply", known: known},
		{name: "all clusters", all: true, known: known},
		{name: "known clusters", clusters: []string{"member1", "member2"}, known: known},
		{name: "both", all: true, clusters: []string{"member1"}, known: known, want: "--all-clusters and --cluster cannot be used together"},
		{name: "both, before the clusters are listed", all: true, clusters: []string{"member1"}, want: "--all-clusters and --cluster cannot be used together"},
		{name: "one unknown", clusters: []string{"member1", "nope"}, known: known, want: "cluster nope does not exist"},
		{name: "two unknown", clusters: []string{"x", "member2", "y"}, known: known, want: "cluster x does not exist\ncluster y does not exist"},
		{name: "not listed yet", clusters: []string{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateTargets(tc.all, tc.clusters, tc.known)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			for _, line := range strings.Split(tc.want, "\n") {
				if !strings.Contains(err.Error(), line) {
					t.Errorf("error %q lacks %q", err, line)
				}
			}
		})
	}
}

func TestClusters(t *testing.T) {
	t.Parallel()
	if got := Clusters([]string{" member1", "", "member2 "}); !cmp.Equal(got, []string{"member1", "member2"}) {
		t.Errorf("Clusters = %v", got)
	}
	if got := Clusters(nil); got != nil {
		t.Errorf("Clusters(nil) = %v", got)
	}
}

var (
	deployment = &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:         schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Scope:            meta.RESTScopeNamespace,
	}
	clusterRole = &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		Resource:         schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		Scope:            meta.RESTScopeRoot,
	}
)

func TestPolicyFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		mapping   *meta.RESTMapping
		namespace string
		clusters  []string
		wantKind  string
		wantNS    string
	}{
		{name: "namespaced, some clusters", mapping: deployment, namespace: "ns", clusters: []string{"member1"}, wantKind: "PropagationPolicy", wantNS: "ns"},
		{name: "namespaced, all clusters", mapping: deployment, namespace: "ns", wantKind: "PropagationPolicy", wantNS: "ns"},
		{name: "cluster-scoped: its namespace is ignored", mapping: clusterRole, namespace: "ns", clusters: []string{"member1", "member2"}, wantKind: "ClusterPropagationPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := PolicyFor(tc.mapping, tc.namespace, "web", tc.clusters)
			if err != nil {
				t.Fatal(err)
			}
			if p.GetAPIVersion() != "policy.karmada.io/v1alpha1" || p.GetKind() != tc.wantKind || p.GetNamespace() != tc.wantNS {
				t.Errorf("policy %s %s in %q, want %s in %q", p.GetAPIVersion(), p.GetKind(), p.GetNamespace(), tc.wantKind, tc.wantNS)
			}
			if want := policy.Name(tc.wantNS, "web", tc.mapping.GroupVersionKind); p.GetName() != want {
				t.Errorf("name %q, want karmadactl's %q", p.GetName(), want)
			}
			selectors, _, _ := unstructured.NestedSlice(p.Object, "spec", "resourceSelectors")
			wantSelector := map[string]any{"apiVersion": tc.mapping.GroupVersionKind.GroupVersion().String(), "kind": tc.mapping.GroupVersionKind.Kind, "name": "web"}
			if tc.wantNS != "" {
				wantSelector["namespace"] = tc.wantNS
			}
			if !cmp.Equal(selectors, []any{wantSelector}) {
				t.Errorf("selectors %v, want %v", selectors, wantSelector)
			}
			names, found, _ := unstructured.NestedStringSlice(p.Object, "spec", "placement", "clusterAffinity", "clusterNames")
			if len(tc.clusters) == 0 {
				if found && len(names) > 0 {
					t.Errorf("clusterNames %v, want none (every member)", names)
				}
			} else if !cmp.Equal(names, tc.clusters) {
				t.Errorf("clusterNames %v, want %v", names, tc.clusters)
			}
		})
	}
}

func TestWithPolicies(t *testing.T) {
	t.Parallel()
	infos := []*resource.Info{
		{Namespace: "ns", Name: "web", Mapping: deployment},
		{Name: "reader", Mapping: clusterRole},
	}
	out, err := WithPolicies(infos, []string{"member1"}, func(p *unstructured.Unstructured) (*resource.Info, error) {
		return &resource.Info{Namespace: p.GetNamespace(), Name: p.GetName(), Object: p}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range out {
		kind := "object"
		if u, ok := i.Object.(*unstructured.Unstructured); ok {
			kind = u.GetKind()
		}
		got = append(got, kind+" "+i.Namespace+"/"+i.Name)
	}
	want := []string{
		"object ns/web", "PropagationPolicy ns/" + policy.Name("ns", "web", deployment.GroupVersionKind),
		"object /reader", "ClusterPropagationPolicy /" + policy.Name("", "reader", clusterRole.GroupVersionKind),
	}
	if !cmp.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}

	failing := errors.New("no policy kind")
	if _, err := WithPolicies(infos, nil, func(*unstructured.Unstructured) (*resource.Info, error) { return nil, failing }); !errors.Is(err, failing) {
		t.Errorf("error %v, want %v", err, failing)
	}
	if _, err := WithPolicies([]*resource.Info{{Name: "x"}}, nil, nil); err == nil {
		t.Error("an object without a mapping: no error")
	}
}
