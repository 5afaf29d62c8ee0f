package execution

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// dispatchReconciler decides whether a Work's manifests go to its member
// now, and sets the Dispatching condition.
type dispatchReconciler struct {
	// notReadyRetry is how long the Work of a member that is not Ready
	// waits before it is tried again.
	notReadyRetry time.Duration
}

// reconcile sets Dispatching in status. dispatch: the manifests go to the
// member now; a suspended Work waits for its spec to change, a Work of a
// member that is not Ready is tried again after retry. changed: the
// condition's status changed, which is worth an event.
func (r *dispatchReconciler) reconcile(work *workv1alpha1.Work, cluster *clusterv1alpha1.Cluster, status *workv1alpha1.WorkStatus) (dispatch, changed bool, retry time.Duration) {
	suspended := ptr.Deref(work.Spec.SuspendDispatching, false)
	changed = setDispatching(status, suspended)
	switch {
	case suspended:
		return false, changed, 0
	case !clusterReady(cluster):
		return false, changed, r.notReadyRetry
	}
	return true, changed, 0
}

// setDispatching sets the Dispatching condition: False while the Work is
// suspended, True otherwise. It reports whether the condition's status
// changed.
func setDispatching(status *workv1alpha1.WorkStatus, suspended bool) bool {
	cond := metav1.Condition{Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.WorkDispatchingReason, Message: workv1alpha1.WorkDispatchingMessage}
	if suspended {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.WorkSuspendDispatchingReason, workv1alpha1.WorkSuspendDispatchingMessage
	}
	changed := !meta.IsStatusConditionPresentAndEqual(status.Conditions, cond.Type, cond.Status)
	meta.SetStatusCondition(&status.Conditions, cond)
	return changed
}
