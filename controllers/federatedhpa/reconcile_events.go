package federatedhpa

import (
	"k8s.io/apimachinery/pkg/runtime"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

// eventsReconciler records the events of a sync on the FederatedHPA.
type eventsReconciler struct {
	// record is record.EventRecorder's Event.
	record func(obj runtime.Object, eventType, reason, message string)
}

// reconcile records events on fhpa, in order.
func (r *eventsReconciler) reconcile(fhpa *autoscalingv1alpha1.FederatedHPA, events []podautoscaler.Event) {
	for _, e := range events {
		r.record(fhpa, e.Type, e.Reason, e.Message)
	}
}
