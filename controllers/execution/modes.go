package execution

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/drift"
)

// writeMode is how a Work's manifests are written: its apply mode and
// take-over annotations (apis/flotilla/v1alpha1), which its policy gave it.
type writeMode struct {
	apply flotillav1alpha1.ApplyMode
	// takeOver is empty when the Work does not say: the manifest's
	// conflict resolution decides.
	takeOver flotillav1alpha1.TakeOver
}

// writeModeOf reads work's apply annotations; ApplyCorrect for a Work
// without one (or with a value the registry would have refused).
func writeModeOf(work *workv1alpha1.Work) writeMode {
	m := writeMode{apply: flotillav1alpha1.ApplyMode(work.Annotations[flotillav1alpha1.ApplyModeAnnotation]),
		takeOver: flotillav1alpha1.TakeOver(work.Annotations[flotillav1alpha1.TakeOverAnnotation])}
	switch m.apply {
	case flotillav1alpha1.ApplyReportOnly, flotillav1alpha1.ApplyIfNotDrifted, flotillav1alpha1.ApplyCreateOnly, flotillav1alpha1.ApplyServerSide:
	default:
		m.apply = flotillav1alpha1.ApplyCorrect
	}
	return m
}

// tracksDrift tells whether a drift stays open in the member (ReportOnly,
// IfNotDrifted), so that each apply checks it again, rather than being
// written back.
func (m writeMode) tracksDrift() bool {
	return m.apply == flotillav1alpha1.ApplyReportOnly || m.apply == flotillav1alpha1.ApplyIfNotDrifted
}

// takeOverOf is the take-over of an existing object that Flotilla did not
// create: the Work's when it says, else the manifest's conflict
// resolution (overwrite: Always; abort or none: Never), as in Karmada.
func (m writeMode) takeOverOf(desired *unstructured.Unstructured) flotillav1alpha1.TakeOver {
	switch m.takeOver {
	case flotillav1alpha1.TakeOverAlways, flotillav1alpha1.TakeOverIfNoDiff, flotillav1alpha1.TakeOverNever:
		return m.takeOver
	}
	if desired.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] == workv1alpha2.ResourceConflictResolutionOverwrite {
		return flotillav1alpha1.TakeOverAlways
	}
	return flotillav1alpha1.TakeOverNever
}

// checkTakeOver tells whether desired may be written over observed, an
// existing member object, under take-over t. An object Flotilla (or
// Karmada) applied is always its own. Without a take-over annotation a
// refusal is Karmada's, word for word (checkConflict).
func (m writeMode) checkTakeOver(desired, observed *unstructured.Unstructured, cluster string) error {
	if !adopting(observed) {
		return nil
	}
	switch m.takeOverOf(desired) {
	case flotillav1alpha1.TakeOverNever:
		if m.takeOver == "" {
			return checkConflict(desired, observed, cluster)
		}
		return fmt.Errorf("%s %s already exists in the cluster %s and is not taken over (%s: %s)",
			desired.GetKind(), klog.KObj(desired), cluster, flotillav1alpha1.TakeOverAnnotation, flotillav1alpha1.TakeOverNever)
	}
	return nil
}

// notTakenOver is the refusal to take over observed under IfNoDiff: it
// differs from the manifest want in report's fields.
func notTakenOver(want *unstructured.Unstructured, cluster string, report drift.Report) error {
	return fmt.Errorf("%s %s already exists in the cluster %s and differs from the manifest in %s: not taken over (%s: %s)",
		want.GetKind(), klog.KObj(want), cluster, report.Paths(), flotillav1alpha1.TakeOverAnnotation, flotillav1alpha1.TakeOverIfNoDiff)
}

// unresolved returns the fields of recorded, a drift recorded for a
// manifest, that member still does not hold as they were applied; a field
// whose applied value the record does not show (masked, cut) counts while
// fresh, a comparison with the manifest now, still names its path.
func unresolved(recorded []workv1alpha1.DriftedField, member map[string]any, fresh drift.Report) drift.Report {
	var out drift.Report
	for _, f := range recorded {
		holds, known := drift.Holds(member, f)
		if !known {
			holds = !fresh.Has(f.Path)
		}
		if !holds {
			out.Fields = append(out.Fields, f)
		}
	}
	return out
}
