package descheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

const (
	dynamicPlacement    = `{"clusterAffinity":{"clusterNames":["m1","m2"]},"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted","weightPreference":{"dynamicWeight":"AvailableReplicas"}}}`
	aggregatedPlacement = `{"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Aggregated"}}`
	staticPlacement     = `{"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted","weightPreference":{"staticWeightList":[{"targetCluster":{"clusterNames":["m1"]},"weight":1}]}}}`
	duplicatedPlacement = `{"replicaScheduling":{"replicaSchedulingType":"Duplicated"}}`
)

// rb is the binding of Deployment ns/web, scheduled with applied at
// generation 3 to m1 (4 replicas) and m2 (2).
func rb(applied string) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-deployment", Generation: 3, ResourceVersion: "42",
			Annotations: map[string]string{workv1alpha2.AppliedPlacementAnnotation: applied}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web", UID: "uid-web"},
			Replicas: 6,
			Clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 4}, {Name: "m2", Replicas: 2}},
		},
		Status: workv1alpha2.ResourceBindingStatus{SchedulerObservedGeneration: 3},
	}
	return b
}

func TestCandidate(t *testing.T) {
	t.Parallel()
	now := metav1.Now()
	for _, tc := range []struct {
		name   string
		mutate func(*workv1alpha2.ResourceBinding)
		want   bool
	}{
		{"dynamic weight", func(*workv1alpha2.ResourceBinding) {}, true},
		{"aggregated", func(b *workv1alpha2.ResourceBinding) {
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = aggregatedPlacement
		}, true},
		{"static weights", func(b *workv1alpha2.ResourceBinding) {
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = staticPlacement
		}, false},
		{"duplicated", func(b *workv1alpha2.ResourceBinding) {
			b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = duplicatedPlacement
		}, false},
		{"never scheduled: no applied placement", func(b *workv1alpha2.ResourceBinding) { b.Annotations = nil }, false},
		{"an applied placement that does not parse", func(b *workv1alpha2.ResourceBinding) { b.Annotations[workv1alpha2.AppliedPlacementAnnotation] = "{" }, false},
		{"scheduling pending (the spec moved since)", func(b *workv1alpha2.ResourceBinding) { b.Generation = 4 }, false},
		{"not a Deployment", func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.Kind = "StatefulSet" }, false},
		{"a Deployment of another group version", func(b *workv1alpha2.ResourceBinding) { b.Spec.Resource.APIVersion = "extensions/v1beta1" }, false},
		{"no replicas", func(b *workv1alpha2.ResourceBinding) { b.Spec.Replicas = 0 }, false},
		{"no clusters", func(b *workv1alpha2.ResourceBinding) { b.Spec.Clusters = nil }, false},
		{"being deleted", func(b *workv1alpha2.ResourceBinding) { b.DeletionTimestamp = &now }, false},
		{"a failover under way", func(b *workv1alpha2.ResourceBinding) {
			b.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "m3"}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := rb(dynamicPlacement)
			tc.mutate(b)
			if got := candidate(b); got != tc.want {
				t.Errorf("candidate() = %t, want %t", got, tc.want)
			}
		})
	}
}

// status is an aggregated status item of the workload in cluster.
func status(cluster, raw string) workv1alpha2.AggregatedStatusItem {
	item := workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true}
	if raw != "" {
		item.Status = &runtime.RawExtension{Raw: []byte(raw)}
	}
	return item
}

func TestLacking(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		clusters []workv1alpha2.TargetCluster
		status   []workv1alpha2.AggregatedStatusItem
		want     map[string]int32
	}{
		{name: "no status yet: every cluster, none Ready", want: map[string]int32{"m1": 0, "m2": 0}},
		{name: "all Ready: none",
			status: []workv1alpha2.AggregatedStatusItem{status("m1", `{"replicas":4,"readyReplicas":4}`), status("m2", `{"readyReplicas":2}`)},
			want:   map[string]int32{}},
		{name: "m1 lacks two",
			status: []workv1alpha2.AggregatedStatusItem{status("m1", `{"replicas":4,"readyReplicas":2}`), status("m2", `{"readyReplicas":2}`)},
			want:   map[string]int32{"m1": 2}},
		{name: "readyReplicas left out (none Ready) or a status without it",
			status: []workv1alpha2.AggregatedStatusItem{status("m1", `{"replicas":4}`), status("m2", "")},
			want:   map[string]int32{"m1": 0, "m2": 0}},
		{name: "a status that does not parse counts no Ready replicas",
			status: []workv1alpha2.AggregatedStatusItem{status("m1", `[`), status("m2", `{"readyReplicas":2}`)},
			want:   map[string]int32{"m1": 0}},
		{name: "clusters with no replicas are left out",
			clusters: []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 0}, {Name: "m2", Replicas: 2}},
			want:     map[string]int32{"m2": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := rb(dynamicPlacement)
			if tc.clusters != nil {
				b.Spec.Clusters = tc.clusters
			}
			b.Status.AggregatedStatus = tc.status
			if diff := cmp.Diff(tc.want, lacking(b)); diff != "" {
				t.Errorf("lacking() (-want +got):\n%s", diff)
			}
		})
	}
}
