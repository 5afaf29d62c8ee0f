package federatedhpa

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/podautoscaler"
)

func TestEventsReconciler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events []podautoscaler.Event
		want   []string
	}{
		{name: "none: nothing recorded"},
		{name: "in order, on the FederatedHPA", events: []podautoscaler.Event{
			{Type: corev1.EventTypeWarning, Reason: podautoscaler.ReasonFailedGetResourceMetric, Message: "first"},
			{Type: corev1.EventTypeNormal, Reason: podautoscaler.ReasonSuccessfulRescale, Message: "second"},
		}, want: []string{"Warning FailedGetResourceMetric first", "Normal SuccessfulRescale second"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := fhpa()
			var got []string
			r := eventsReconciler{record: func(obj runtime.Object, eventType, reason, message string) {
				if obj != h {
					t.Errorf("event recorded on %v", obj)
				}
				got = append(got, eventType+" "+reason+" "+message)
			}}
			r.reconcile(h, tc.events)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
