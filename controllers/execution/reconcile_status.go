package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// statusReconciler writes a Work's status: one patch of the status
// subresource per reconcile, none when it is unchanged.
type statusReconciler struct {
	// patch patches the Work.
	patch workPatchFunc
	// event records an event.
	event eventFunc
}

// reconcile patches the Work's status subresource with status when it
// differs from stored, the status last stored (see records.freshStatus),
// and records the write in recs. The controller is the only writer of a
// Work's status (conditions and manifestStatuses alike), so the merge patch
// replaces both lists whole and needs no resourceVersion. Once written, the
// manifests whose reflected status or health changed are reported
// (statusEvents), and dispatching asks for a WorkDispatching event.
func (r *statusReconciler) reconcile(ctx context.Context, recs *records, work *workv1alpha1.Work, stored, status *workv1alpha1.WorkStatus, dispatching bool) error {
	if statusEqual(stored, status) {
		return nil
	}
	patch, err := statusPatch(status)
	if err != nil {
		return err
	}
	out, err := r.patch(ctx, work, types.MergePatchType, patch, "status")
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	recs.wroteStatus(work.UID, work.ResourceVersion, out.ResourceVersion, &out.Status)
	for _, e := range statusEvents(stored, status) {
		r.event(work, corev1.EventTypeNormal, e.reason, e.message)
	}
	if dispatching {
		if cond := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDispatching); cond != nil {
			r.event(work, corev1.EventTypeNormal, eventReasonWorkDispatching, cond.Message)
		}
	}
	return nil
}

// statusPatch is a merge patch setting status, with empty lists written as
// null so that they are removed rather than left alone.
func statusPatch(status *workv1alpha1.WorkStatus) ([]byte, error) {
	s := map[string]any{"conditions": nil, "manifestStatuses": nil}
	if len(status.Conditions) > 0 {
		s["conditions"] = status.Conditions
	}
	if len(status.ManifestStatuses) > 0 {
		s["manifestStatuses"] = status.ManifestStatuses
	}
	return json.Marshal(map[string]any{"status": s})
}

// statusEqual compares Work statuses, the reflected member statuses by
// their JSON value rather than their bytes (the server may reorder keys).
func statusEqual(a, b *workv1alpha1.WorkStatus) bool {
	if len(a.Conditions) != len(b.Conditions) || len(a.ManifestStatuses) != len(b.ManifestStatuses) {
		return false
	}
	for i := range a.Conditions {
		x, y := a.Conditions[i], b.Conditions[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(&y.LastTransitionTime) {
			return false
		}
	}
	for i := range a.ManifestStatuses {
		x, y := a.ManifestStatuses[i], b.ManifestStatuses[i]
		if x.Identifier != y.Identifier || x.Health != y.Health || !rawEqual(x.Status, y.Status) || !slices.Equal(x.Drift, y.Drift) {
			return false
		}
	}
	return true
}

// rawEqual compares raw JSON by value; nil equals an empty or null value.
func rawEqual(a, b *runtime.RawExtension) bool {
	return reflect.DeepEqual(rawValue(a), rawValue(b))
}

func rawValue(r *runtime.RawExtension) any {
	if r == nil || len(r.Raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(r.Raw, &v); err != nil {
		return string(r.Raw)
	}
	return v
}

type statusEvent struct{ reason, message string }

// statusEvents are the ReflectStatusSucceed and InterpretHealthSucceed
// events of a status write: one each for the manifests whose reflected
// status or health changed from stored (events are news, not a heartbeat).
func statusEvents(stored, status *workv1alpha1.WorkStatus) []statusEvent {
	before := map[workv1alpha1.ResourceIdentifier]workv1alpha1.ManifestStatus{}
	for _, ms := range stored.ManifestStatuses {
		before[ms.Identifier] = ms
	}
	var out []statusEvent
	for _, ms := range status.ManifestStatuses {
		old, had := before[ms.Identifier]
		if ms.Status != nil && (!had || !rawEqual(old.Status, ms.Status)) {
			out = append(out, statusEvent{eventReasonReflectStatusSucceed, fmt.Sprintf("Reflect status for object(%s) succeed.", objectName(ms.Identifier))})
		}
		if ms.Health != workv1alpha1.ResourceUnknown && (!had || old.Health != ms.Health) {
			out = append(out, statusEvent{eventReasonInterpretHealthSucceed,
				fmt.Sprintf("Interpret health of object(%s) as %s.", objectName(ms.Identifier), strings.ToLower(string(ms.Health)))})
		}
	}
	return out
}
