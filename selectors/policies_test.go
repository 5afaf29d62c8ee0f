package selectors

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestChoosePolicy(t *testing.T) {
	t.Parallel()
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion("apps/v1")
	obj.SetKind("Deployment")
	obj.SetNamespace("default")
	obj.SetName("web")
	obj.SetLabels(map[string]string{"app": "web"})
	kind := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment"}
	byName := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	byLabel := policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	pol := func(name string, cluster bool, sel policyv1alpha1.ResourceSelector, prio int32, preempt bool) *Policy {
		p := &Policy{Cluster: cluster, Name: name, Spec: &policyv1alpha1.PropagationSpec{ResourceSelectors: []policyv1alpha1.ResourceSelector{sel}, Priority: ptr.To(prio)}}
		if !cluster {
			p.Namespace = "default"
		}
		if preempt {
			p.Spec.Preemption = policyv1alpha1.PreemptAlways
		}
		return p
	}
	other := pol("other", false, kind, 0, false)
	other.Namespace = "prod"
	for _, tc := range []struct {
		name      string
		pps, cpps []*Policy
		current   *Policy
		want      string
	}{
		{"none", nil, nil, nil, ""},
		{"a PropagationPolicy of another namespace does not select", []*Policy{other}, nil, nil, ""},
		{"a PropagationPolicy before any ClusterPropagationPolicy", []*Policy{pol("pp", false, kind, 0, false)}, []*Policy{pol("cpp", true, byName, 9, false)}, nil, "pp/default/pp"},
		{"explicit priority first", []*Policy{pol("a", false, byName, 1, false), pol("b", false, kind, 5, false)}, nil, nil, "pp/default/b"},
		{"then the more specific selector", []*Policy{pol("a", false, kind, 0, false), pol("b", false, byLabel, 0, false), pol("c", false, byName, 0, false)}, nil, nil, "pp/default/c"},
		{"then the smaller name", []*Policy{pol("b", false, kind, 0, false), pol("a", false, kind, 0, false)}, nil, nil, "pp/default/a"},
		{"the claimer keeps it without preemption", []*Policy{pol("a", false, kind, 0, false), pol("b", false, kind, 5, false)}, nil, pol("a", false, kind, 0, false), "pp/default/a"},
		{"a higher priority preempts", []*Policy{pol("a", false, kind, 0, false), pol("b", false, kind, 5, true)}, nil, pol("a", false, kind, 0, false), "pp/default/b"},
		{"a PropagationPolicy preempts a ClusterPropagationPolicy's claim", []*Policy{pol("pp", false, kind, 0, true)}, []*Policy{pol("cpp", true, kind, 9, false)}, pol("cpp", true, kind, 9, false), "pp/default/pp"},
		{"a claimer that no longer selects it loses it", []*Policy{pol("b", false, kind, 0, false)}, nil, pol("a", false, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Secret"}, 0, false), "pp/default/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ChoosePolicy(tc.pps, tc.cpps, obj, tc.current)
			key := ""
			if ok {
				key = got.Key()
			}
			if key != tc.want {
				t.Errorf("chose %q, want %q", key, tc.want)
			}
		})
	}
}
