package execution

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/drift"
)

func TestSetDriftedAndEvents(t *testing.T) {
	t.Parallel()
	cm := memberObject(configMap("cm", nil, nil))
	found := drift.Report{Fields: []workv1alpha1.DriftedField{{Path: "data.k", ValueInMember: `"x"`, ValueApplied: `"v"`}}}
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	earlier := metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.WorkDriftCorrectedReason,
		Message: "earlier", ObservedGeneration: 1, LastTransitionTime: then}
	leftOpen := metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkDriftDetectedReason,
		Message: "Changed in the member, left as it is by the apply mode: ConfigMap default/cm: data.k", ObservedGeneration: 1, LastTransitionTime: then}
	tests := []struct {
		name     string
		outcomes []outcome
		before   []metav1.Condition
		// want is the Drifted condition afterwards (nil: none).
		want       *metav1.Condition
		wantEvents []string
		// previous are the manifest statuses stored before.
		previous []workv1alpha1.ManifestStatus
	}{{
		name:     "no drift: no condition, no event",
		outcomes: []outcome{{desired: cm, observed: cm, wrote: true}},
	}, {
		name:     "no drift now: the last one's condition stays",
		outcomes: []outcome{{desired: cm, observed: cm}},
		before:   []metav1.Condition{earlier},
		want:     &earlier,
	}, {
		name:     "a drift written back: False, DriftCorrected, at the time it was found, events on the Work and the template",
		outcomes: []outcome{{desired: cm, resource: "configmaps", observed: cm, wrote: true, drift: found}},
		before:   []metav1.Condition{earlier},
		want: &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.WorkDriftCorrectedReason,
			Message: "Written back over changes in the member: ConfigMap default/cm: data.k", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)},
		wantEvents: []string{
			"Work/w Normal DriftCorrected ConfigMap default/cm in cluster member1 differed from what was applied in data.k; the applied values were written back.",
			"ConfigMap/cm@template-uid Normal DriftCorrected ConfigMap default/cm in cluster member1 differed from what was applied in data.k; the applied values were written back.",
		},
	}, {
		name:     "a drift not written back: True, DriftDetected, warnings",
		outcomes: []outcome{{desired: cm, resource: "configmaps", drift: found, err: errors.New("forbidden")}},
		want: &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkDriftDetectedReason,
			Message: "Changed in the member, not written back yet: ConfigMap default/cm: data.k", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)},
		wantEvents: []string{
			"Work/w Warning DriftNotCorrected ConfigMap default/cm in cluster member1 differs from what was applied in data.k; writing it back failed: forbidden.",
			"ConfigMap/cm@template-uid Warning DriftNotCorrected ConfigMap default/cm in cluster member1 differs from what was applied in data.k; writing it back failed: forbidden.",
		},
	}, {
		name:     "a drift the apply mode leaves: True, DriftDetected, warnings naming the mode",
		outcomes: []outcome{{desired: cm, resource: "configmaps", observed: cm, drift: found, driftChecked: true, held: heldReportOnly}},
		before:   []metav1.Condition{earlier},
		want: &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkDriftDetectedReason,
			Message: "Changed in the member, left as it is by the apply mode: ConfigMap default/cm: data.k", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)},
		wantEvents: []string{
			"Work/w Warning DriftDetected ConfigMap default/cm in cluster member1 differs from the manifest in data.k; left as it is (apply.flotilla.io/mode: ReportOnly).",
			"ConfigMap/cm@template-uid Warning DriftDetected ConfigMap default/cm in cluster member1 differs from the manifest in data.k; left as it is (apply.flotilla.io/mode: ReportOnly).",
		},
	}, {
		name:     "the same drift left, found again: the condition keeps its time, no event",
		outcomes: []outcome{{ordinal: 0, desired: cm, resource: "configmaps", observed: cm, drift: found, driftChecked: true, held: heldDrifted}},
		before:   []metav1.Condition{leftOpen},
		previous: []workv1alpha1.ManifestStatus{{Drift: found.Fields}},
		want:     &leftOpen,
	}, {
		name:     "a drift left open, now resolved: False, DriftResolved",
		outcomes: []outcome{{desired: cm, observed: cm, driftChecked: true}},
		before:   []metav1.Condition{leftOpen},
		want: &metav1.Condition{Type: workv1alpha1.WorkDrifted, Status: metav1.ConditionFalse, Reason: workv1alpha1.WorkDriftResolvedReason,
			Message: "The member objects hold what was applied.", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(now)},
	}, {
		name:     "resolved in one manifest, not checked in another: left as it is",
		outcomes: []outcome{{desired: cm, observed: cm, driftChecked: true}, {ordinal: 1, desired: cm, observed: cm}},
		before:   []metav1.Condition{leftOpen},
		want:     &leftOpen,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status := &workv1alpha1.WorkStatus{Conditions: append([]metav1.Condition(nil), tc.before...)}
			setDrifted(status, 2, tc.outcomes, now)
			got := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkDrifted)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Drifted condition (-want +got):\n%s", diff)
			}
			events := &fakeEvents{}
			r := eventsReconciler{event: events.event}
			r.driftEvents(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, testCluster, tc.outcomes, tc.previous)
			if diff := cmp.Diff(tc.wantEvents, events.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWasApplied(t *testing.T) {
	t.Parallel()
	applied := func(status metav1.ConditionStatus, gen int64) *workv1alpha1.WorkStatus {
		return &workv1alpha1.WorkStatus{Conditions: []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: status, ObservedGeneration: gen}}}
	}
	for _, tc := range []struct {
		name   string
		status *workv1alpha1.WorkStatus
		want   bool
	}{
		{"applied at this generation", applied(metav1.ConditionTrue, 3), true},
		{"applied at an older generation", applied(metav1.ConditionTrue, 2), false},
		{"failed", applied(metav1.ConditionFalse, 3), false},
		{"never", &workv1alpha1.WorkStatus{}, false},
	} {
		if got := wasApplied(tc.status, 3); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
