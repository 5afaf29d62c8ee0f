package execution

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestDispatchReconciler(t *testing.T) {
	t.Parallel()
	const retry = 7 * time.Second
	dispatching := func(s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: workv1alpha1.WorkDispatching, Status: s}}
	}
	tests := []struct {
		name          string
		suspend       *bool
		ready         bool
		stored        []metav1.Condition
		wantDispatch  bool
		wantChanged   bool
		wantRetry     time.Duration
		wantCondition metav1.ConditionStatus
		wantReason    string
	}{
		{name: "ready, first time: dispatched, a change", ready: true,
			wantDispatch: true, wantChanged: true, wantCondition: metav1.ConditionTrue, wantReason: workv1alpha1.WorkDispatchingReason},
		{name: "ready, already dispatching: dispatched, no change", ready: true, suspend: ptr.To(false), stored: dispatching(metav1.ConditionTrue),
			wantDispatch: true, wantCondition: metav1.ConditionTrue, wantReason: workv1alpha1.WorkDispatchingReason},
		{name: "suspended: held without retry, a change", ready: true, suspend: ptr.To(true), stored: dispatching(metav1.ConditionTrue),
			wantChanged: true, wantCondition: metav1.ConditionFalse, wantReason: workv1alpha1.WorkSuspendDispatchingReason},
		{name: "suspended on a member not Ready: held without retry", suspend: ptr.To(true), stored: dispatching(metav1.ConditionFalse),
			wantCondition: metav1.ConditionFalse, wantReason: workv1alpha1.WorkSuspendDispatchingReason},
		{name: "member not Ready: held, retried", stored: dispatching(metav1.ConditionTrue),
			wantRetry: retry, wantCondition: metav1.ConditionTrue, wantReason: workv1alpha1.WorkDispatchingReason},
		{name: "resumed: dispatched, a change", ready: true, suspend: ptr.To(false), stored: dispatching(metav1.ConditionFalse),
			wantDispatch: true, wantChanged: true, wantCondition: metav1.ConditionTrue, wantReason: workv1alpha1.WorkDispatchingReason},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cond := metav1.ConditionFalse
			if tc.ready {
				cond = metav1.ConditionTrue
			}
			cluster := &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: cond}}}}
			work := &workv1alpha1.Work{Spec: workv1alpha1.WorkSpec{SuspendDispatching: tc.suspend}}
			status := &workv1alpha1.WorkStatus{Conditions: tc.stored}
			r := dispatchReconciler{notReadyRetry: retry}
			dispatch, changed, retryAfter := r.reconcile(work, cluster, status)
			if dispatch != tc.wantDispatch || changed != tc.wantChanged || retryAfter != tc.wantRetry {
				t.Errorf("got dispatch %v changed %v retry %v, want %v %v %v", dispatch, changed, retryAfter, tc.wantDispatch, tc.wantChanged, tc.wantRetry)
			}
			c := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDispatching)
			if c == nil || c.Status != tc.wantCondition || c.Reason != tc.wantReason {
				t.Errorf("Dispatching %+v, want %s %s", c, tc.wantCondition, tc.wantReason)
			}
		})
	}
}

func TestSetDispatching(t *testing.T) {
	t.Parallel()
	var status workv1alpha1.WorkStatus
	if !setDispatching(&status, false) {
		t.Error("first condition not reported as a change")
	}
	if setDispatching(&status, false) {
		t.Error("unchanged condition reported as a change")
	}
	if !setDispatching(&status, true) {
		t.Error("suspension not reported as a change")
	}
	c := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDispatching)
	if c.Status != metav1.ConditionFalse || c.Reason != "SuspendDispatching" || c.Message != "Work dispatching is in a suspended state." {
		t.Errorf("condition %+v", c)
	}
}
