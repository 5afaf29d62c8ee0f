package status

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestAggregateItems(t *testing.T) {
	t.Parallel()
	st := deploymentStatus(t, 2, 1)
	deleting := work(t, "m3", metav1.ConditionTrue, "", st)
	deleting.DeletionTimestamp = &metav1.Time{Time: fixedNow}
	otherManifest := work(t, "m1", metav1.ConditionTrue, "", st)
	otherManifest.Status.ManifestStatuses[0].Identifier.Name = "other"
	outside := work(t, "m1", metav1.ConditionTrue, "", st)
	outside.Namespace = "default"
	evicting := rb("m1")
	evicting.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2", PurgeMode: policyv1alpha1.PurgeModeGracefully}}
	changed := work(t, "m1", metav1.ConditionTrue, "", st)
	changed.Generation = 3
	changed.Status.Conditions[0].ObservedGeneration = 2
	current := work(t, "m1", metav1.ConditionTrue, "", st)
	current.Generation = 3
	current.Status.Conditions[0].ObservedGeneration = 3
	// rb assigns 2 replicas to each cluster.
	builtForOne := work(t, "m1", metav1.ConditionTrue, "", st)
	builtForOne.Annotations[workv1alpha2.AssignedReplicasAnnotation] = "1"
	builtForTwo := work(t, "m1", metav1.ConditionTrue, "", st)
	builtForTwo.Annotations[workv1alpha2.AssignedReplicasAnnotation] = "2"
	evictedNow := rb("m1")
	evictedNow.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "m2", PurgeMode: policyv1alpha1.PurgeModeDirectly}}

	healthy := func(cluster string) workv1alpha2.AggregatedStatusItem {
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Status: st, Applied: true, Health: workv1alpha2.ResourceHealthy}
	}
	tests := []struct {
		name         string
		binding      *workv1alpha2.ResourceBinding
		works        []*workv1alpha1.Work
		want         []workv1alpha2.AggregatedStatusItem
		fullyApplied metav1.ConditionStatus
	}{{
		name:    "every scheduled cluster applied, sorted by cluster",
		binding: rb("m1", "m2"),
		works:   []*workv1alpha1.Work{work(t, "m2", metav1.ConditionTrue, "", st), work(t, "m1", metav1.ConditionTrue, "", st)},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1"), healthy("m2")}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "apply failed: message, unknown health, no status",
		binding: rb("m1", "m2"),
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), work(t, "m2", metav1.ConditionFalse, "conflict", st)},
		want: []workv1alpha2.AggregatedStatusItem{healthy("m1"),
			{ClusterName: "m2", AppliedMessage: "conflict", Health: workv1alpha2.ResourceUnknown}},
		fullyApplied: metav1.ConditionFalse,
	}, {
		// A Work changed (replicas moved to it) but not yet applied: its
		// status is of the old spec, its health unknown.
		name:    "applied for an older generation of the Work: unknown health, no status",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{changed},
		want:    []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceUnknown}}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "applied for the current generation",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{current},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1")}, fullyApplied: metav1.ConditionTrue,
	}, {
		// Replicas moved to m1 (2 now) but its Work not yet rebuilt: its
		// health is of the replica it had.
		name:    "Work built for another assignment: unknown health, no status",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{builtForOne},
		want:    []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceUnknown}}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "Work built for the current assignment",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{builtForTwo},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1")}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "assignment of a cluster being evicted is not compared",
		binding: evicting,
		works: []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), func() *workv1alpha1.Work {
			w := work(t, "m2", metav1.ConditionTrue, "", st)
			w.Annotations[workv1alpha2.AssignedReplicasAnnotation] = "5"
			return w
		}()},
		want: []workv1alpha2.AggregatedStatusItem{healthy("m1"), healthy("m2")}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "not applied yet: no condition",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{work(t, "m1", "", "", nil)},
		want:    []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Health: workv1alpha2.ResourceUnknown}}, fullyApplied: metav1.ConditionFalse,
	}, {
		name:    "applied without status yet",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", nil)},
		want:    []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceUnknown}}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "Work of a scheduled cluster missing",
		binding: rb("m1", "m2"),
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st)},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1")}, fullyApplied: metav1.ConditionFalse,
	}, {
		name:    "Work being deleted and Work outside an execution namespace skipped",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), deleting, outside},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1")}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "Work of an unscheduled cluster",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), work(t, "m2", metav1.ConditionTrue, "", st)},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1"), healthy("m2")}, fullyApplied: metav1.ConditionFalse,
	}, {
		name:    "cluster being evicted gracefully still counts",
		binding: evicting,
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), work(t, "m2", metav1.ConditionTrue, "", st)},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1"), healthy("m2")}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:    "cluster evicted directly does not",
		binding: evictedNow,
		works:   []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), work(t, "m2", metav1.ConditionTrue, "", st)},
		want:    []workv1alpha2.AggregatedStatusItem{healthy("m1"), healthy("m2")}, fullyApplied: metav1.ConditionFalse,
	}, {
		name:    "status of another manifest ignored",
		binding: rb("m1"),
		works:   []*workv1alpha1.Work{otherManifest},
		want:    []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true, Health: workv1alpha2.ResourceUnknown}}, fullyApplied: metav1.ConditionTrue,
	}, {
		name:         "not scheduled",
		binding:      rb(),
		want:         []workv1alpha2.AggregatedStatusItem{},
		fullyApplied: metav1.ConditionFalse,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := aggregateItems(tc.works, &tc.binding.Spec)
			if !itemsEqual(got, tc.want) {
				t.Errorf("items\n got %+v\nwant %+v", got, tc.want)
			}
			cond := fullyAppliedCondition(&tc.binding.Spec, tc.binding.Generation, got)
			if cond.Status != tc.fullyApplied {
				t.Errorf("FullyApplied %s, want %s", cond.Status, tc.fullyApplied)
			}
			wantReason := workv1alpha2.FullyAppliedFailedReason
			if tc.fullyApplied == metav1.ConditionTrue {
				wantReason = workv1alpha2.FullyAppliedSuccessReason
			}
			if cond.Reason != wantReason {
				t.Errorf("reason %s, want %s", cond.Reason, wantReason)
			}
		})
	}
}

func TestRawEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b *runtime.RawExtension
		want bool
	}{
		{"both absent", nil, nil, true},
		{"null is absent", &runtime.RawExtension{Raw: []byte("null")}, nil, true},
		{"key order and spaces", &runtime.RawExtension{Raw: []byte(`{"a":1, "b":2}`)}, &runtime.RawExtension{Raw: []byte(`{"b":2,"a":1}`)}, true},
		{"different values", &runtime.RawExtension{Raw: []byte(`{"a":1}`)}, &runtime.RawExtension{Raw: []byte(`{"a":2}`)}, false},
		{"absent and present", nil, &runtime.RawExtension{Raw: []byte(`{}`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := rawEqual(tc.a, tc.b); got != tc.want {
				t.Errorf("rawEqual = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDriftedCondition(t *testing.T) {
	t.Parallel()
	st := deploymentStatus(t, 2, 1)
	at := func(sec int) metav1.Time { return metav1.NewTime(fixedNow.Add(time.Duration(sec) * time.Second)) }
	drifted := func(cluster string, status metav1.ConditionStatus, reason, msg string, when metav1.Time) *workv1alpha1.Work {
		w := work(t, cluster, metav1.ConditionTrue, "", st)
		w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: status, Reason: reason, Message: msg, LastTransitionTime: when})
		return w
	}
	gone := drifted("m3", metav1.ConditionTrue, workv1alpha1.WorkDriftDetectedReason, "x", at(9))
	gone.DeletionTimestamp = &metav1.Time{Time: fixedNow}
	for _, tc := range []struct {
		name  string
		works []*workv1alpha1.Work
		want  *metav1.Condition
	}{
		{name: "no Work ever drifted: none", works: []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st)}},
		{name: "corrected in one cluster: False, DriftCorrected, naming it",
			works: []*workv1alpha1.Work{work(t, "m1", metav1.ConditionTrue, "", st), drifted("m2", metav1.ConditionFalse, workv1alpha1.WorkDriftCorrectedReason, "Written back over changes in the member: Deployment default/web: spec.replicas", at(1))},
			want: &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.WorkDriftCorrectedReason,
				Message: "m2: Written back over changes in the member: Deployment default/web: spec.replicas", ObservedGeneration: 4, LastTransitionTime: at(1)}},
		{name: "one not written back: True with its reason; the latest time; clusters in order; a Work being deleted left out",
			works: []*workv1alpha1.Work{drifted("m2", metav1.ConditionTrue, workv1alpha1.WorkDriftDetectedReason, "b", at(2)), drifted("m1", metav1.ConditionFalse, workv1alpha1.WorkDriftCorrectedReason, "a", at(5)), gone},
			want: &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkDriftDetectedReason,
				Message: "m1: a | m2: b", ObservedGeneration: 4, LastTransitionTime: at(5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := driftedCondition(tc.works, 4)
			if (got == nil) != (tc.want == nil) || (got != nil && (!conditionEqual(got, tc.want) || !got.LastTransitionTime.Equal(&tc.want.LastTransitionTime))) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
