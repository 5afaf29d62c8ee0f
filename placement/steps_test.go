package placement

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// Schedule tells Input.Step each step it ran, in order.
func TestScheduleSteps(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("5"))}
	all := []string{StepFilter, StepScore, StepSelect, StepAssignReplicas}
	for _, tc := range []struct {
		name      string
		placement *policyv1alpha1.Placement
		want      []string
	}{
		{name: "duplicated: every step", placement: &policyv1alpha1.Placement{}, want: all},
		{name: "divided: every step", placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}, want: all},
		{name: "no cluster fits: filtering only", placement: &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("zzz")}, want: []string{StepFilter}},
		{name: "each affinity term tried", placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
			{AffinityName: "none", ClusterAffinity: *pt.OnClusters("zzz")}, {AffinityName: "a", ClusterAffinity: *pt.OnClusters("a")}}},
			want: append([]string{StepFilter}, all...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			_, _ = Schedule(Input{Spec: pt.BindingSpec(2, tc.placement), Status: &workv1alpha2.ResourceBindingStatus{}, Clusters: clusters,
				Step: func(step string, took time.Duration) {
					if took < 0 {
						t.Errorf("step %s took %v", step, took)
					}
					got = append(got, step)
				}})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}
