package execution

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// Event reasons of drift, Flotilla's own.
const (
	// eventReasonDriftCorrected: a member object differed from what was
	// applied in the fields Flotilla owns, and the applied values were
	// written back.
	eventReasonDriftCorrected = workv1alpha1.WorkDriftCorrectedReason
	// eventReasonDriftNotCorrected: the same, but writing back failed.
	eventReasonDriftNotCorrected = "DriftNotCorrected"
	// eventReasonDriftDetected: a member object differs from its manifest
	// and the apply mode leaves it so (ReportOnly, IfNotDrifted).
	eventReasonDriftDetected = workv1alpha1.WorkDriftDetectedReason
)

// Results of the drift counter.
const (
	driftCorrected    = "corrected"
	driftNotCorrected = "not_corrected"
	driftLeft         = "left"
)

// driftsTotal counts the drifts found in member objects.
var driftsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
	Namespace: "flotilla", Name: "member_object_drifts_total",
	Help:           "Member objects found to differ from what was applied in the fields Flotilla owns, by cluster, resource and what was done (corrected: the applied values were written back; not_corrected: writing them back failed; left: the apply mode leaves it).",
	StabilityLevel: metrics.ALPHA,
}, []string{"cluster", "resource", "result"})

func init() { legacyregistry.MustRegister(driftsTotal) }

// wasApplied tells whether status records generation as applied.
func wasApplied(status *workv1alpha1.WorkStatus, generation int64) bool {
	c := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkApplied)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == generation
}

// corrected tells whether a drifted outcome's applied values were written
// back.
func corrected(o outcome) bool { return o.wrote && o.err == nil }

// setDrifted sets the Work's Drifted condition when an apply found drifts:
// True while one is not written back (the apply mode leaves it, or writing
// failed), False with DriftCorrected once all were; its transition time is
// now, the time of the last drift found. Without a drift in outcomes the
// condition is left as it is, unless it is True and every manifest was
// checked and found in place (driftChecked): then it is False with
// DriftResolved.
func setDrifted(status *workv1alpha1.WorkStatus, generation int64, outcomes []outcome, now time.Time) {
	var fixed, open, left []string
	checked := len(outcomes) > 0
	for _, o := range outcomes {
		checked = checked && o.driftChecked
		if !o.drift.Drifted() || o.desired == nil {
			continue
		}
		what := fmt.Sprintf("%s %s: %s", o.desired.GetKind(), klog.KObj(o.desired), o.drift.Paths())
		switch {
		case o.held != "":
			left = append(left, what)
		case corrected(o):
			fixed = append(fixed, what)
		default:
			open = append(open, what)
		}
	}
	cond := metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.WorkDriftCorrectedReason,
		Message: "Written back over changes in the member: " + strings.Join(fixed, "; "), ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now)}
	switch {
	case len(left) > 0 || len(open) > 0:
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.WorkDriftDetectedReason
		var parts []string
		if len(left) > 0 {
			parts = append(parts, "Changed in the member, left as it is by the apply mode: "+strings.Join(left, "; "))
		}
		if len(open) > 0 {
			parts = append(parts, "Changed in the member, not written back yet: "+strings.Join(open, "; "))
		}
		cond.Message = strings.Join(parts, ". ")
	case len(fixed) > 0:
	case checked && meta.IsStatusConditionTrue(status.Conditions, workv1alpha1.WorkDrifted):
		cond.Reason, cond.Message = workv1alpha1.WorkDriftResolvedReason, "The member objects hold what was applied."
	default:
		return
	}
	if len(cond.Message) > maxConditionMessage {
		cond.Message = cond.Message[:maxConditionMessage]
	}
	if cur := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDrifted); cur != nil && len(left) > 0 && len(open) == 0 &&
		cur.Status == cond.Status && cur.Reason == cond.Reason && cur.Message == cond.Message {
		// The same drift left open, found again: not a new one.
		return
	}
	meta.RemoveStatusCondition(&status.Conditions, workv1alpha1.WorkDrifted)
	status.Conditions = append(status.Conditions, cond)
}

// driftEvents records, for each drifted outcome, an event on the Work and
// on the resource template naming the cluster and the paths, and counts
// it. A drift the apply mode leaves open is reported when it is new: not
// when previous, the stored manifest statuses, records the same fields.
func (r *eventsReconciler) driftEvents(work *workv1alpha1.Work, cluster string, outcomes []outcome, previous []workv1alpha1.ManifestStatus) {
	for _, o := range outcomes {
		if !o.drift.Drifted() || o.desired == nil {
			continue
		}
		eventType, reason, result := corev1.EventTypeNormal, eventReasonDriftCorrected, driftCorrected
		msg := fmt.Sprintf("%s %s in cluster %s differed from what was applied in %s; the applied values were written back.",
			o.desired.GetKind(), klog.KObj(o.desired), cluster, o.drift.Paths())
		switch {
		case o.held != "":
			if slices.ContainsFunc(previous, func(ms workv1alpha1.ManifestStatus) bool {
				return ms.Identifier.Ordinal == o.ordinal && slices.Equal(ms.Drift, o.drift.Fields)
			}) {
				continue
			}
			eventType, reason, result = corev1.EventTypeWarning, eventReasonDriftDetected, driftLeft
			msg = fmt.Sprintf("%s %s in cluster %s differs from the manifest in %s; left as it is (%s: %s).",
				o.desired.GetKind(), klog.KObj(o.desired), cluster, o.drift.Paths(), flotillav1alpha1.ApplyModeAnnotation, o.held)
		case !corrected(o):
			eventType, reason, result = corev1.EventTypeWarning, eventReasonDriftNotCorrected, driftNotCorrected
			msg = fmt.Sprintf("%s %s in cluster %s differs from what was applied in %s; writing it back failed: %v.",
				o.desired.GetKind(), klog.KObj(o.desired), cluster, o.drift.Paths(), o.err)
		}
		r.event(work, eventType, reason, msg)
		r.templateEvent(o.desired, eventType, reason, msg)
		driftsTotal.WithLabelValues(cluster, o.resource, result).Inc()
	}
}
