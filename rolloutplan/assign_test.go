package rolloutplan

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestAssign(t *testing.T) {
	t.Parallel()
	clusters := []Cluster{
		{Name: "m4", Labels: map[string]string{"env": "prod", "wave": "2"}},
		{Name: "m1", Labels: map[string]string{"env": "canary"}},
		{Name: "m3", Labels: map[string]string{"env": "prod", "wave": "1"}},
		{Name: "m2", Labels: map[string]string{"env": "prod"}},
		{Name: "m5", Labels: map[string]string{"env": "dev"}},
	}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	tests := []struct {
		name         string
		stages       []flotillav1alpha1.RolloutStage
		want         [][]string
		wantUnstaged []string
	}{{
		name: "names first, then the first matching selector, ordered by label then name",
		stages: []flotillav1alpha1.RolloutStage{
			{Name: "canary", Clusters: flotillav1alpha1.StageClusters{Names: []string{"m1", "m2"}}},
			{Name: "prod", Clusters: flotillav1alpha1.StageClusters{LabelSelector: prod, OrderByLabel: "wave"}},
			{Name: "rest", Clusters: flotillav1alpha1.StageClusters{LabelSelector: &metav1.LabelSelector{}}},
		},
		want: [][]string{{"m1", "m2"}, {"m3", "m4"}, {"m5"}},
	}, {
		name: "a cluster no stage selects is unstaged",
		stages: []flotillav1alpha1.RolloutStage{
			{Name: "prod", Clusters: flotillav1alpha1.StageClusters{LabelSelector: prod}},
		},
		want:         [][]string{{"m2", "m3", "m4"}},
		wantUnstaged: []string{"m1", "m5"},
	}, {
		name: "a stage naming a cluster outside the placement is empty",
		stages: []flotillav1alpha1.RolloutStage{
			{Name: "gone", Clusters: flotillav1alpha1.StageClusters{Names: []string{"m9"}}},
			{Name: "all", Clusters: flotillav1alpha1.StageClusters{LabelSelector: &metav1.LabelSelector{}}},
		},
		want: [][]string{nil, {"m1", "m2", "m3", "m4", "m5"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assigned, unstaged := Assign(tc.stages, clusters)
			got := make([][]string, len(assigned))
			for i, cs := range assigned {
				for _, c := range cs {
					got[i] = append(got[i], c.Name)
				}
			}
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(unstaged, tc.wantUnstaged) {
				t.Errorf("Assign = %v, unstaged %v; want %v, unstaged %v", got, unstaged, tc.want, tc.wantUnstaged)
			}
		})
	}
}
