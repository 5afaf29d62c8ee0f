package execution

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// maxConditionMessage is the longest message a condition may carry.
const maxConditionMessage = 32768

// setApplied sets the Applied condition from the outcomes, with Karmada's
// reasons and messages; the message of a failure holds the member's
// errors. It returns those errors. The condition observes generation, the
// Work's: until a changed Work is applied, its status (and the health a
// binding aggregates from it) is known to be of the previous spec.
func setApplied(status *workv1alpha1.WorkStatus, generation int64, outcomes []outcome) error {
	var errs []error
	for _, o := range outcomes {
		if o.err != nil {
			errs = append(errs, o.err)
		}
	}
	cond := metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.WorkAppliedSuccessfulReason, Message: workv1alpha1.WorkAppliedSuccessfulMessage, ObservedGeneration: generation}
	err := utilerrors.NewAggregate(errs)
	if err != nil {
		msg := fmt.Sprintf("Failed to apply all manifests (%d/%d): %s", len(outcomes)-len(errs), len(outcomes), err.Error())
		if len(msg) > maxConditionMessage {
			msg = msg[:maxConditionMessage]
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.WorkAppliedFailedReason, msg
	} else if reason, msg := heldMessage(outcomes); reason != "" {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, msg
	}
	meta.SetStatusCondition(&status.Conditions, cond)
	return err
}

// heldMessage is the Applied=False reason and message when the apply mode
// left member objects that differ from their manifests as they are; empty
// when it left none.
func heldMessage(outcomes []outcome) (reason, message string) {
	var reportOnly, drifted []string
	for _, o := range outcomes {
		if o.desired == nil {
			continue
		}
		what := fmt.Sprintf("%s %s (%s)", o.desired.GetKind(), klog.KObj(o.desired), o.drift.Paths())
		switch o.held {
		case heldReportOnly:
			reportOnly = append(reportOnly, what)
		case heldDrifted:
			drifted = append(drifted, what)
		}
	}
	switch {
	case len(drifted) > 0:
		reason, message = workv1alpha1.WorkHeldBackByDriftReason, "Not applied: drifted in the member, and the apply mode IfNotDrifted holds changes back until the drifted fields hold the applied values again or the object is deleted: "+strings.Join(drifted, "; ")
	case len(reportOnly) > 0:
		reason, message = workv1alpha1.WorkReportOnlyReason, "Not applied: the apply mode ReportOnly leaves member objects as they are, and these differ from the manifest: "+strings.Join(reportOnly, "; ")
	default:
		return "", ""
	}
	if len(message) > maxConditionMessage {
		message = message[:maxConditionMessage]
	}
	return reason, message
}

// manifestsReconciler reflects the status and health of the member
// objects into the Work's manifestStatuses.
type manifestsReconciler struct {
	// reflect returns the status of a member object (Karmada's
	// ReflectStatus).
	reflect func(obj *unstructured.Unstructured) (*runtime.RawExtension, error)
	// health interprets the health of a member object (Karmada's
	// InterpretHealth); interpreted is false when the kind has no such
	// hook.
	health func(obj *unstructured.Unstructured) (health workv1alpha1.ResourceHealth, interpreted bool, err error)
	// event records an event.
	event eventFunc
}

// reconcile returns one manifest status per manifest whose object exists,
// in manifest order. Failures are recorded as events on the Work. A
// manifest's drift is the one found now, none when the apply checked and
// found none (driftChecked), or else the last one recorded in previous
// (the stored statuses) for the same object.
func (r *manifestsReconciler) reconcile(ctx context.Context, work *workv1alpha1.Work, outcomes []outcome, previous []workv1alpha1.ManifestStatus) []workv1alpha1.ManifestStatus {
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
		switch {
		case o.drift.Drifted():
			ms.Drift = o.drift.Fields
		case o.driftChecked:
			// Checked now, and none: the member holds the manifest.
		default:
			ms.Drift = previousDrift(previous, ms.Identifier)
		}
		raw, err := r.reflect(o.observed)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Reflecting status failed", "object", klog.KObj(o.observed), "kind", gvk.Kind)
			r.event(work, corev1.EventTypeWarning, eventReasonReflectStatusFailed, fmt.Sprintf("Reflect status for object(%s) failed: %v", objectName(ms.Identifier), err))
		} else {
			ms.Status = raw
		}
		health, interpreted, err := r.health(o.observed)
		switch {
		case err != nil:
			klog.FromContext(ctx).Error(err, "Interpreting health failed", "object", klog.KObj(o.observed), "kind", gvk.Kind)
			r.event(work, corev1.EventTypeWarning, eventReasonInterpretHealthFailed, fmt.Sprintf("Interpret health of object(%s) failed: %v", objectName(ms.Identifier), err))
		case interpreted:
			ms.Health = health
		default:
			// A kind without a health hook counts as healthy, as in
			// Karmada's work status controller: graceful evictions and
			// rollouts wait for Healthy.
			ms.Health = workv1alpha1.ResourceHealthy
		}
		out = append(out, ms)
	}
	return out
}

// previousDrift is the drift recorded for the object id names in the
// stored statuses, if any.
func previousDrift(previous []workv1alpha1.ManifestStatus, id workv1alpha1.ResourceIdentifier) []workv1alpha1.DriftedField {
	for _, ms := range previous {
		if ms.Identifier == id {
			return ms.Drift
		}
	}
	return nil
}

// objectName is "kind/namespace/name" (or "kind/name") of a manifest.
func objectName(id workv1alpha1.ResourceIdentifier) string {
	if id.Namespace == "" {
		return id.Kind + "/" + id.Name
	}
	return id.Kind + "/" + id.Namespace + "/" + id.Name
}
