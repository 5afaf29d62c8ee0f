package execution

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// Event reasons of drift, Flotilla's own.
const (
	// eventReasonDriftCorrected: a member object differed from what was
	// applied in the fields Flotilla owns, and the applied values were
	// written back.
	eventReasonDriftCorrected = "DriftCorrected"
	// eventReasonDriftNotCorrected: the same, but writing back failed.
	eventReasonDriftNotCorrected = "DriftNotCorrected"
)

// Results of the drift counter.
const (
	driftCorrected    = "corrected"
	driftNotCorrected = "not_corrected"
)

// driftsTotal counts the drifts found in member objects.
var driftsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
	Namespace: "flotilla", Name: "member_object_drifts_total",
	Help:           "Member objects found to differ from what was applied in the fields Flotilla owns, by cluster, resource and what was done (corrected: the applied values were written back).",
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
// True while one could not be written back, False with DriftCorrected
// once all were; its transition time is now, the time of the last drift
// found. Without a drift in outcomes the condition is left as it is.
func setDrifted(status *workv1alpha1.WorkStatus, generation int64, outcomes []outcome, now time.Time) {
	var fixed, open []string
	for _, o := range outcomes {
		if !o.drift.Drifted() || o.desired == nil {
			continue
		}
		what := fmt.Sprintf("%s %s: %s", o.desired.GetKind(), klog.KObj(o.desired), o.drift.Paths())
		if corrected(o) {
			fixed = append(fixed, what)
		} else {
			open = append(open, what)
		}
	}
	if len(fixed) == 0 && len(open) == 0 {
		return
	}
	cond := metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.WorkDriftCorrectedReason,
		Message: "Written back over changes in the member: " + strings.Join(fixed, "; "), ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now)}
	if len(open) > 0 {
		cond.Status, cond.Reason = metav1.ConditionTrue, workv1alpha1.WorkDriftDetectedReason
		cond.Message = "Changed in the member, not written back yet: " + strings.Join(open, "; ")
	}
	if len(cond.Message) > maxConditionMessage {
		cond.Message = cond.Message[:maxConditionMessage]
	}
	meta.RemoveStatusCondition(&status.Conditions, workv1alpha1.WorkDrifted)
	status.Conditions = append(status.Conditions, cond)
}

// driftEvents records, for each drifted outcome, an event on the Work and
// on the resource template naming the cluster and the paths, and counts
// it.
func (r *eventsReconciler) driftEvents(work *workv1alpha1.Work, cluster string, outcomes []outcome) {
	for _, o := range outcomes {
		if !o.drift.Drifted() || o.desired == nil {
			continue
		}
		eventType, reason, result := corev1.EventTypeNormal, eventReasonDriftCorrected, driftCorrected
		msg := fmt.Sprintf("%s %s in cluster %s differed from what was applied in %s; the applied values were written back.",
			o.desired.GetKind(), klog.KObj(o.desired), cluster, o.drift.Paths())
		if !corrected(o) {
			eventType, reason, result = corev1.EventTypeWarning, eventReasonDriftNotCorrected, driftNotCorrected
			msg = fmt.Sprintf("%s %s in cluster %s differs from what was applied in %s; writing it back failed: %v.",
				o.desired.GetKind(), klog.KObj(o.desired), cluster, o.drift.Paths(), o.err)
		}
		r.event(work, eventType, reason, msg)
		r.templateEvent(o.desired, eventType, reason, msg)
		driftsTotal.WithLabelValues(cluster, o.resource, result).Inc()
	}
}
