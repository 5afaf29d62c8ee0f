package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/interpreter"
)

// maxConditionMessage is the longest message a condition may carry.
const maxConditionMessage = 32768

// setDispatching sets the Dispatching condition: False while the Work is
// suspended, True otherwise. It reports whether the condition's status
// changed, which is worth an event.
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

// setApplied sets the Applied condition from the outcomes, with Karmada's
// reasons and messages; the message of a failure holds the member's
// errors. It returns those errors.
func setApplied(status *workv1alpha1.WorkStatus, outcomes []outcome) error {
	var errs []error
	for _, o := range outcomes {
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	cond := metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.WorkAppliedSuccessfulReason, Message: workv1alpha1.WorkAppliedSuccessfulMessage}
	err := utilerrors.NewAggregate(errs)
	if err != nil {
		msg := fmt.Sprintf("Failed to apply all manifests (%d/%d): %s", len(outcomes)-len(errs), len(outcomes), err.Error())
		if len(msg) > maxConditionMessage {
			msg = msg[:maxConditionMessage]
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.WorkAppliedFailedReason, msg
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	return err
}

// manifestStatuses reflects the status and health of the member objects,
// one entry per manifest whose object exists, in manifest order. Failures
// are recorded as events on the Work.
func (c *Controller) manifestStatuses(ctx context.Context, work *workv1alpha1.Work, outcomes []outcome) []workv1alpha1.ManifestStatus {
	var out []workv1alpha1.ManifestStatus
	for _, o := range outcomes {
		if o.observed == nil || o.desired == nil {
			continue
		}
		gvk := o.desired.GroupVersionKind()
		ms := workv1alpha1.ManifestStatus{
			Identifier: workv1alpha1.ResourceIdentifier{
				Ordinal: o.ordinal, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Resource: o.resource,
				Namespace: o.observed.GetNamespace(), Name: o.observed.GetName(),
			},
			Health: workv1alpha1.ResourceUnknown,
		}
		raw, err := c.interp.ReflectStatus(o.observed)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Reflecting status failed", "object", klog.KObj(o.observed), "kind", gvk.Kind)
			c.recorder.Eventf(work, corev1.EventTypeWarning, eventReasonReflectStatusFailed, "Reflect status for object(%s) failed: %v", objectName(ms.Identifier), err)
		} else {
			ms.Status = raw
		}
		if c.interp.HookEnabled(gvk, interpreter.InterpretHealth) {
			if health, err := c.interp.InterpretHealth(o.observed); err == nil {
				ms.Health = workv1alpha1.ResourceHealth(health)
			} else {
				klog.FromContext(ctx).Error(err, "Interpreting health failed", "object", klog.KObj(o.observed), "kind", gvk.Kind)
				c.recorder.Eventf(work, corev1.EventTypeWarning, eventReasonInterpretHealthFailed, "Interpret health of object(%s) failed: %v", objectName(ms.Identifier), err)
			}
		}
		out = append(out, ms)
	}
	return out
}

// writeStatus patches the Work's status subresource with status when it
// differs from stored, the status last stored (see records.freshStatus),
// and records the write. The controller is the only writer of a
// Work's status (conditions and manifestStatuses alike), so the merge patch
// replaces both lists whole and needs no resourceVersion. dispatching asks
// for a WorkDispatching event once the write succeeded.
func (c *Controller) writeStatus(ctx context.Context, m *memberState, work *workv1alpha1.Work, stored, status *workv1alpha1.WorkStatus, dispatching bool) error {
	if statusEqual(stored, status) {
		return nil
	}
	patch, err := statusPatch(status)
	if err != nil {
		return err
	}
	out, err := c.client.WorkV1alpha1().Works(work.Namespace).Patch(ctx, work.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: ControllerName}, "status")
	if err != nil {
		return fmt.Errorf("writing status: %w", err)
	}
	m.records.wroteStatus(work.UID, work.ResourceVersion, &out.Status)
	for _, e := range statusEvents(stored, status) {
		c.recorder.Event(work, corev1.EventTypeNormal, e.reason, e.message)
	}
	if dispatching {
		if cond := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDispatching); cond != nil {
			c.recorder.Event(work, corev1.EventTypeNormal, eventReasonWorkDispatching, cond.Message)
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
		if x.Identifier != y.Identifier || x.Health != y.Health || !rawEqual(x.Status, y.Status) {
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

// objectName is "kind/namespace/name" (or "kind/name") of a manifest.
func objectName(id workv1alpha1.ResourceIdentifier) string {
	if id.Namespace == "" {
		return id.Kind + "/" + id.Name
	}
	return id.Kind + "/" + id.Namespace + "/" + id.Name
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
