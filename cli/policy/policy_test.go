package policy

import (
	"regexp"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

var deployment = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}

func TestName(t *testing.T) {
	t.Parallel()
	a := Name("default", "nginx", deployment)
	if !regexp.MustCompile(`^nginx-[bcdfghjklmnpqrstvwxz2456789]+$`).MatchString(a) {
		t.Errorf("Name = %q, want nginx-<hash>", a)
	}
	if a != Name("default", "nginx", deployment) {
		t.Error("Name is not stable")
	}
	for _, other := range []string{Name("other", "nginx", deployment), Name("default", "nginx", schema.GroupVersionKind{Version: "v1", Kind: "Service"})} {
		if other == a {
			t.Errorf("another namespace or kind gives the same name %q", a)
		}
	}
	cr := Name("", "system:Controller", schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"})
	if !regexp.MustCompile(`^system\.controller-[a-z0-9]+$`).MatchString(cr) {
		t.Errorf("ClusterRole system:Controller: %q, want system.controller-<hash> (lower case, ':' made '.')", cr)
	}
}

func TestFor(t *testing.T) {
	t.Parallel()
	pp, ok := For(Target{GVK: deployment, Namespace: "ns", Name: "web", Namespaced: true}, []string{"member1"}).(*policyv1alpha1.PropagationPolicy)
	if !ok || pp.Namespace != "ns" || pp.Name != Name("ns", "web", deployment) || pp.Kind != "PropagationPolicy" {
		t.Fatalf("namespaced: %+v", pp)
	}
	if s := pp.Spec.ResourceSelectors; len(s) != 1 || s[0].APIVersion != "apps/v1" || s[0].Kind != "Deployment" || s[0].Name != "web" || s[0].Namespace != "ns" {
		t.Errorf("selectors %+v", s)
	}
	if got := pp.Spec.Placement.ClusterAffinity.ClusterNames; len(got) != 1 || got[0] != "member1" {
		t.Errorf("placement %v", got)
	}
	cr := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	cpp, ok := For(Target{GVK: cr, Name: "reader"}, nil).(*policyv1alpha1.ClusterPropagationPolicy)
	if !ok || cpp.Namespace != "" || cpp.Kind != "ClusterPropagationPolicy" || cpp.Spec.Placement.ClusterAffinity == nil ||
		len(cpp.Spec.Placement.ClusterAffinity.ClusterNames) != 0 {
		t.Errorf("cluster-scoped, every cluster: %+v", cpp)
	}
}
