package execution

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/drift"
)

func TestManifestsReconciler(t *testing.T) {
	t.Parallel()
	cm := memberObject(configMap("cm", nil, nil))
	raw := &runtime.RawExtension{Raw: []byte(`{"phase":"x"}`)}
	id := workv1alpha1.ResourceIdentifier{Ordinal: 1, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "cm"}
	tests := []struct {
		name        string
		outcomes    []outcome
		reflectErr  error
		health      workv1alpha1.ResourceHealth
		interpreted bool
		healthErr   error
		// previous are the stored statuses.
		previous   []workv1alpha1.ManifestStatus
		want       []workv1alpha1.ManifestStatus
		wantEvents []string
	}{
		{name: "no member object: no entry", outcomes: []outcome{{desired: cm}, {err: errors.New("x")}}},
		{name: "reflected and interpreted", outcomes: []outcome{{desired: cm, err: errors.New("x")}, {ordinal: 1, desired: cm, resource: "configmaps", observed: cm}},
			health: workv1alpha1.ResourceHealthy, interpreted: true,
			want: []workv1alpha1.ManifestStatus{{Identifier: id, Status: raw, Health: workv1alpha1.ResourceHealthy}}},
		{name: "no health hook: Healthy", outcomes: []outcome{{ordinal: 1, desired: cm, resource: "configmaps", observed: cm}},
			want: []workv1alpha1.ManifestStatus{{Identifier: id, Status: raw, Health: workv1alpha1.ResourceHealthy}}},
		{name: "a drift found now is listed", outcomes: []outcome{{ordinal: 1, desired: cm, resource: "configmaps", observed: cm,
			drift: drift.Report{Fields: []workv1alpha1.DriftedField{{Path: "data.k", ValueInMember: `"x"`, ValueApplied: `"v"`}}}}},
			previous: []workv1alpha1.ManifestStatus{{Identifier: id, Drift: []workv1alpha1.DriftedField{{Path: "data.old"}}}},
			want: []workv1alpha1.ManifestStatus{{Identifier: id, Status: raw, Health: workv1alpha1.ResourceHealthy,
				Drift: []workv1alpha1.DriftedField{{Path: "data.k", ValueInMember: `"x"`, ValueApplied: `"v"`}}}}},
		{name: "without a new drift, the last one recorded for the object stays", outcomes: []outcome{{ordinal: 1, desired: cm, resource: "configmaps", observed: cm}},
			previous: []workv1alpha1.ManifestStatus{{Identifier: id, Drift: []workv1alpha1.DriftedField{{Path: "data.old"}}}},
			want: []workv1alpha1.ManifestStatus{{Identifier: id, Status: raw, Health: workv1alpha1.ResourceHealthy,
				Drift: []workv1alpha1.DriftedField{{Path: "data.old"}}}}},
		{name: "failures: events, the entry kept", outcomes: []outcome{{ordinal: 1, desired: cm, resource: "configmaps", observed: cm}},
			reflectErr: errors.New("lua"), interpreted: true, healthErr: errors.New("hook"),
			want: []workv1alpha1.ManifestStatus{{Identifier: id, Health: workv1alpha1.ResourceUnknown}},
			wantEvents: []string{
				"Work/w Warning ReflectStatusFailed Reflect status for object(ConfigMap/default/cm) failed: lua",
				"Work/w Warning InterpretHealthFailed Interpret health of object(ConfigMap/default/cm) failed: hook",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			events := &fakeEvents{}
			r := manifestsReconciler{
				reflect: func(*unstructured.Unstructured) (*runtime.RawExtension, error) {
					if tc.reflectErr != nil {
						return nil, tc.reflectErr
					}
					return raw, nil
				},
				health: func(*unstructured.Unstructured) (workv1alpha1.ResourceHealth, bool, error) {
					return tc.health, tc.interpreted, tc.healthErr
				},
				event: events.event,
			}
			got := r.reconcile(context.Background(), &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: "w"}}, tc.outcomes, tc.previous)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("manifest statuses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, events.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetApplied(t *testing.T) {
	t.Parallel()
	cm := memberObject(configMap("cm", nil, nil))
	dataK := drift.Report{Fields: []workv1alpha1.DriftedField{{Path: "data.k", ValueInMember: `"x"`, ValueApplied: `"v"`}}}
	tests := []struct {
		name       string
		outcomes   []outcome
		wantStatus metav1.ConditionStatus
		wantReason string
		wantMsg    string
	}{
		{"all applied", []outcome{{}, {}}, metav1.ConditionTrue, "AppliedSuccessful", "Manifest has been successfully applied"},
		{"one failed", []outcome{{}, {err: errors.New(`Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1`)}},
			metav1.ConditionFalse, "AppliedFailed",
			`Failed to apply all manifests (1/2): Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1`},
		{"no manifest", nil, metav1.ConditionTrue, "AppliedSuccessful", "Manifest has been successfully applied"},
		{"left by ReportOnly", []outcome{{}, {desired: cm, held: heldReportOnly, drift: dataK}}, metav1.ConditionFalse, "ReportOnly",
			"Not applied: the apply mode ReportOnly leaves member objects as they are, and these differ from the manifest: ConfigMap default/cm (data.k)"},
		{"held back by a drift", []outcome{{desired: cm, held: heldDrifted, drift: dataK}}, metav1.ConditionFalse, "HeldBackByDrift",
			"Not applied: drifted in the member, and the apply mode IfNotDrifted holds changes back until the drifted fields hold the applied values again or the object is deleted: ConfigMap default/cm (data.k)"},
		{"a failure beats a hold", []outcome{{err: errors.New("forbidden")}, {desired: cm, held: heldDrifted, drift: dataK}}, metav1.ConditionFalse, "AppliedFailed",
			"Failed to apply all manifests (1/2): forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var status workv1alpha1.WorkStatus
			err := setApplied(&status, 0, tc.outcomes)
			if (err != nil) != (tc.wantReason == workv1alpha1.WorkAppliedFailedReason) {
				t.Errorf("err %v", err)
			}
			c := meta.FindStatusCondition(status.Conditions, workv1alpha1.WorkApplied)
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason || c.Message != tc.wantMsg {
				t.Errorf("condition %+v", c)
			}
		})
	}
}
