package rollout

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	readyCluster := &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
		{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}}}
	downCluster := &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{
		{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse}}}}
	work := func(revision string, applied metav1.ConditionStatus, appliedGen int64, health ...workv1alpha1.ResourceHealth) *workv1alpha1.Work {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Generation: 4, Annotations: map[string]string{flotillav1alpha1.RevisionAnnotation: revision}}}
		if applied != "" {
			w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: applied, ObservedGeneration: appliedGen, Message: "boom"}}
		}
		for _, h := range health {
			w.Status.ManifestStatuses = append(w.Status.ManifestStatuses, workv1alpha1.ManifestStatus{Health: h})
		}
		return w
	}
	tests := []struct {
		name       string
		cluster    *clusterv1alpha1.Cluster
		work       *workv1alpha1.Work
		want       flotillav1alpha1.ClusterHealth
		wantReason string
	}{
		{"applied and healthy", readyCluster, work("new", metav1.ConditionTrue, 4, workv1alpha1.ResourceHealthy), flotillav1alpha1.ClusterHealthy, ""},
		{"the cluster is down", downCluster, work("new", metav1.ConditionTrue, 4, workv1alpha1.ResourceHealthy), flotillav1alpha1.ClusterUnhealthy, "cluster is not ready"},
		{"the cluster is unknown", nil, work("new", metav1.ConditionTrue, 4, workv1alpha1.ResourceHealthy), flotillav1alpha1.ClusterUnhealthy, "cluster is not ready"},
		{"no Work yet", readyCluster, nil, flotillav1alpha1.ClusterUpdating, "no Work yet"},
		{"the Work is of the old revision", readyCluster, work("old", metav1.ConditionTrue, 4, workv1alpha1.ResourceHealthy), flotillav1alpha1.ClusterUpdating, "Work not at the revision yet"},
		{"applied at an older generation", readyCluster, work("new", metav1.ConditionTrue, 3, workv1alpha1.ResourceHealthy), flotillav1alpha1.ClusterUpdating, "not applied yet"},
		{"not applied", readyCluster, work("new", "", 0), flotillav1alpha1.ClusterUpdating, "not applied yet"},
		{"the apply failed", readyCluster, work("new", metav1.ConditionFalse, 4), flotillav1alpha1.ClusterUnhealthy, "apply failed: boom"},
		{"the workload is not healthy", readyCluster, work("new", metav1.ConditionTrue, 4, workv1alpha1.ResourceUnhealthy), flotillav1alpha1.ClusterUpdating, "workload not healthy"},
		{"a kind without health: applied is healthy", readyCluster, work("new", metav1.ConditionTrue, 4, workv1alpha1.ResourceUnknown), flotillav1alpha1.ClusterHealthy, ""},
		{"one healthy manifest, one not", readyCluster, work("new", metav1.ConditionTrue, 4, workv1alpha1.ResourceHealthy, workv1alpha1.ResourceUnhealthy), flotillav1alpha1.ClusterUpdating, "workload not healthy"},
		{"no status collected", readyCluster, work("new", metav1.ConditionTrue, 4), flotillav1alpha1.ClusterUpdating, "no status collected yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, reason := health(tc.cluster, tc.work, "new")
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("health = %s %q, want %s %q", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}
