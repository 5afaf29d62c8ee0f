package execution

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// TestApplyModes: each apply mode and take-over writes, leaves and reports
// what its documentation says, read from the Work's annotations.
func TestApplyModes(t *testing.T) {
	t.Parallel()
	want := configMap("cm", map[string]string{"k": "v"}, nil)
	newer := configMap("cm", map[string]string{"k": "new"}, nil)
	withData := func(v string) func() *unstructured.Unstructured {
		return func() *unstructured.Unstructured {
			u := memberObject(want)
			u.SetResourceVersion("12")
			_ = unstructured.SetNestedField(u.Object, v, "data", "k")
			return u
		}
	}
	applied, drifted := withData("v"), withData("edited")
	theirs := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "cm", "namespace": "default", "resourceVersion": "3"}, "data": map[string]any{"k": "theirs"}}}
	}
	promoted := func() *unstructured.Unstructured {
		u := theirs()
		u.SetLabels(map[string]string{"app": "cm"})
		_ = unstructured.SetNestedField(u.Object, "v", "data", "k")
		return u
	}
	overwrite := map[string]string{workv1alpha2.ResourceConflictResolutionAnnotation: workv1alpha2.ResourceConflictResolutionOverwrite}
	// recordedEdit is the drift a Work's status records after data.k was
	// edited to "edited" in the member.
	recordedEdit := []workv1alpha1.DriftedField{{Path: "data.k", ValueInMember: `"edited"`, ValueApplied: `"v"`}}
	tests := []struct {
		name     string
		mode     flotillav1alpha1.ApplyMode
		takeOver flotillav1alpha1.TakeOver
		manifest map[string]any
		member   func() *unstructured.Unstructured
		// applied: the Work's status records its generation as applied.
		applied bool
		// recorded is the drift the Work's status records.
		recorded []workv1alpha1.DriftedField

		wantWrites  []string
		wantData    string
		wantDrift   string
		wantChecked bool
		wantHeld    string
		// wantErr is part of the outcome's error; "" for none.
		wantErr     string
		wantWatched bool
	}{
		{name: "ReportOnly, absent: created", mode: flotillav1alpha1.ApplyReportOnly, manifest: want,
			wantWrites: []string{"create configmaps/default/cm"}, wantData: "v", wantChecked: true},
		{name: "ReportOnly, holding the manifest: nothing to report", mode: flotillav1alpha1.ApplyReportOnly, manifest: want,
			member: applied, applied: true, wantData: "v", wantChecked: true},
		{name: "ReportOnly, edited in the member: left as edited, reported", mode: flotillav1alpha1.ApplyReportOnly, manifest: want,
			member: drifted, applied: true, wantData: "edited", wantDrift: "data.k", wantChecked: true, wantHeld: heldReportOnly},
		{name: "ReportOnly, a template change: not written, reported", mode: flotillav1alpha1.ApplyReportOnly, manifest: newer,
			member: applied, wantData: "v", wantDrift: "data.k", wantChecked: true, wantHeld: heldReportOnly},
		{name: "IfNotDrifted, edited in the member: left as edited, reported", mode: flotillav1alpha1.ApplyIfNotDrifted, manifest: want,
			member: drifted, applied: true, wantData: "edited", wantDrift: "data.k", wantChecked: true, wantHeld: heldDrifted},
		{name: "IfNotDrifted, a template change without a drift: written", mode: flotillav1alpha1.ApplyIfNotDrifted, manifest: newer,
			member: applied, wantWrites: []string{"update configmaps/default/cm"}, wantData: "new", wantChecked: true},
		{name: "IfNotDrifted, a template change over a recorded drift still there: held back", mode: flotillav1alpha1.ApplyIfNotDrifted,
			manifest: newer, member: drifted, recorded: recordedEdit, wantData: "edited", wantDrift: "data.k", wantChecked: true, wantHeld: heldDrifted},
		{name: "IfNotDrifted, a template change over a drift resolved in the member: written", mode: flotillav1alpha1.ApplyIfNotDrifted,
			manifest: newer, member: applied, recorded: recordedEdit, wantWrites: []string{"update configmaps/default/cm"}, wantData: "new", wantChecked: true},
		{name: "CreateOnly, absent: created", mode: flotillav1alpha1.ApplyCreateOnly, manifest: want,
			wantWrites: []string{"create configmaps/default/cm"}, wantData: "v"},
		{name: "CreateOnly, edited in the member: the member's, not a drift", mode: flotillav1alpha1.ApplyCreateOnly, manifest: want,
			member: drifted, applied: true, wantData: "edited"},
		{name: "CreateOnly, a template change: not written", mode: flotillav1alpha1.ApplyCreateOnly, manifest: newer,
			member: applied, wantData: "v"},
		{name: "CreateOnly, someone else's: Karmada's error", wantWrites: []string{"create configmaps/default/cm"}, mode: flotillav1alpha1.ApplyCreateOnly, manifest: want,
			member: theirs, wantData: "theirs", wantErr: "Karmada will not manage this resource"},
		{name: "ServerSideApply, absent: applied", mode: flotillav1alpha1.ApplyServerSide, manifest: want,
			wantWrites: []string{"apply configmaps/default/cm"}, wantData: "v"},
		{name: "ServerSideApply, edited in the member: applied back, reported", mode: flotillav1alpha1.ApplyServerSide, manifest: want,
			member: drifted, applied: true, wantWrites: []string{"apply configmaps/default/cm"}, wantData: "v", wantDrift: "data.k"},
		{name: "no mode, edited in the member: written back (Correct)", manifest: want,
			member: drifted, applied: true, wantWrites: []string{"update configmaps/default/cm"}, wantData: "v", wantDrift: "data.k"},
		{name: "an unknown mode counts as Correct", mode: "Sometimes", manifest: want,
			member: drifted, applied: true, wantWrites: []string{"update configmaps/default/cm"}, wantData: "v", wantDrift: "data.k"},
		{name: "take-over IfNoDiff, someone else's holding the manifest: taken over untouched", wantWrites: []string{"create configmaps/default/cm"}, takeOver: flotillav1alpha1.TakeOverIfNoDiff,
			manifest: want, member: promoted, wantData: "v", wantWatched: true},
		{name: "take-over IfNoDiff: kubectl's copy of the template on the manifest is no difference: taken over, written with it", takeOver: flotillav1alpha1.TakeOverIfNoDiff,
			manifest: configMap("cm", map[string]string{"k": "v"}, map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"k":"v"}}`}),
			member:   promoted, wantWrites: []string{"create configmaps/default/cm", "update configmaps/default/cm"}, wantData: "v"},
		{name: "take-over IfNoDiff, someone else's that differs: refused, naming the fields", wantWrites: []string{"create configmaps/default/cm"}, takeOver: flotillav1alpha1.TakeOverIfNoDiff,
			manifest: want, member: theirs, wantData: "theirs", wantErr: "differs from the manifest in data.k, metadata.labels: not taken over"},
		{name: "take-over Never beats the manifest's overwrite", wantWrites: []string{"create configmaps/default/cm"}, takeOver: flotillav1alpha1.TakeOverNever,
			manifest: configMap("cm", map[string]string{"k": "v"}, overwrite), member: theirs, wantData: "theirs", wantErr: "is not taken over"},
		{name: "take-over Always without overwrite: taken over", takeOver: flotillav1alpha1.TakeOverAlways,
			manifest: want, member: theirs, wantWrites: []string{"create configmaps/default/cm", "update configmaps/default/cm"}, wantData: "v"},
		{name: "ReportOnly over someone else's, taken over: only the manifest's own fields reported", wantWrites: []string{"create configmaps/default/cm"}, mode: flotillav1alpha1.ApplyReportOnly,
			takeOver: flotillav1alpha1.TakeOverAlways, manifest: want, member: func() *unstructured.Unstructured {
				u := theirs()
				u.SetLabels(map[string]string{"app": "cm"})
				return u
			}, wantData: "theirs", wantDrift: "data.k", wantChecked: true, wantHeld: heldReportOnly},
		{name: "take-over does not touch Flotilla's own objects", takeOver: flotillav1alpha1.TakeOverNever,
			manifest: newer, member: applied, wantWrites: []string{"update configmaps/default/cm"}, wantData: "new"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var member []*unstructured.Unstructured
			if tc.member != nil {
				member = append(member, tc.member())
			}
			f := newFakeMember(member...)
			work := newWork(t, "cm", tc.manifest)
			work.Annotations = map[string]string{}
			if tc.mode != "" {
				work.Annotations[flotillav1alpha1.ApplyModeAnnotation] = string(tc.mode)
			}
			if tc.takeOver != "" {
				work.Annotations[flotillav1alpha1.TakeOverAnnotation] = string(tc.takeOver)
			}
			var recorded []workv1alpha1.ManifestStatus
			if tc.recorded != nil {
				recorded = []workv1alpha1.ManifestStatus{{Identifier: workv1alpha1.ResourceIdentifier{Ordinal: 0, Version: "v1", Kind: "ConfigMap",
					Resource: "configmaps", Namespace: "default", Name: "cm"}, Drift: tc.recorded}}
			}
			r := applyReconciler{objects: f.api(), records: newRecords(), applied: tc.applied, mode: writeModeOf(work), recorded: recorded,
				retain: func(desired, _ *unstructured.Unstructured) (*unstructured.Unstructured, error) { return desired, nil }}
			o := r.reconcile(context.Background(), testCluster, work)[0]
			if diff := cmp.Diff(tc.wantWrites, f.writes); diff != "" {
				t.Errorf("member writes (-want +got):\n%s", diff)
			}
			data := ""
			if stored := f.objects["configmaps/default/cm"]; stored != nil {
				data, _, _ = unstructured.NestedString(stored.Object, "data", "k")
			}
			if data != tc.wantData {
				t.Errorf("member data.k %q, want %q", data, tc.wantData)
			}
			if got := o.drift.Paths(); got != tc.wantDrift {
				t.Errorf("drifted paths %q, want %q", got, tc.wantDrift)
			}
			if o.driftChecked != tc.wantChecked || o.held != tc.wantHeld {
				t.Errorf("driftChecked %v held %q, want %v %q", o.driftChecked, o.held, tc.wantChecked, tc.wantHeld)
			}
			switch {
			case tc.wantErr == "" && o.err != nil:
				t.Errorf("error %v", o.err)
			case tc.wantErr != "" && (o.err == nil || !strings.Contains(o.err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", o.err, tc.wantErr)
			}
			if _, watched := f.watched["configmaps/default/cm"]; watched != tc.wantWatched {
				t.Errorf("watched one by one %v, want %v", watched, tc.wantWatched)
			}
		})
	}
}
