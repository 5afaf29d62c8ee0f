package rolloutplan

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestCoverage(t *testing.T) {
	t.Parallel()
	clusters := []Cluster{{Name: "m1", Labels: map[string]string{"env": "prod"}}, {Name: "m2", Labels: map[string]string{"env": "prod"}}}
	named := func(name string, clusters ...string) flotillav1alpha1.RolloutStage {
		return flotillav1alpha1.RolloutStage{Name: name, Clusters: flotillav1alpha1.StageClusters{Names: clusters}}
	}
	prod := flotillav1alpha1.RolloutStage{Name: "prod", Clusters: flotillav1alpha1.StageClusters{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}}
	prod2 := *prod.DeepCopy()
	prod2.Name = "prod2"
	tests := []struct {
		name   string
		stages []flotillav1alpha1.RolloutStage
		want   string
	}{
		{"each cluster in one stage", []flotillav1alpha1.RolloutStage{named("a", "m1"), named("b", "m2")}, ""},
		{"a stage naming no registered cluster", []flotillav1alpha1.RolloutStage{named("a", "m1", "m2"), named("b", "m9")}, "stages b select no cluster"},
		{"a name wins over a selector", []flotillav1alpha1.RolloutStage{named("canary", "m1"), prod}, ""},
		{"two selectors", []flotillav1alpha1.RolloutStage{prod, named("canary", "m1"), {Name: "all", Clusters: flotillav1alpha1.StageClusters{LabelSelector: &metav1.LabelSelector{}}}},
			"cluster m2 is selected by stages prod, all (it goes to prod)"},
		{"both", []flotillav1alpha1.RolloutStage{named("x", "m7"), prod, prod2},
			"stages x select no cluster; cluster m1 is selected by stages prod, prod2 (it goes to prod); cluster m2 is selected by stages prod, prod2 (it goes to prod)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Coverage(tc.stages, clusters); got != tc.want {
				t.Errorf("Coverage = %q, want %q", got, tc.want)
			}
		})
	}
}
