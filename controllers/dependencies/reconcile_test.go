package dependencies

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker/workertest"
)

// writes are the recorded writes as "verb resource namespace/name", sorted.
func (f *fixture) writes() []string { return workertest.Writes(f.karmada.Actions()) }

// patchOf returns the patch sent to the binding name.
func (f *fixture) patchOf(t *testing.T, name string) string {
	t.Helper()
	for _, a := range f.karmada.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && p.GetName() == name {
			return string(p.GetPatch())
		}
	}
	t.Fatalf("no patch of %s", name)
	return ""
}

// TestReconcileWrites is the reconcile table of the dependencies
// distributor: bindings and host objects in; attached binding writes, the
// dependencies annotation and Karmada's events out.
func TestReconcileWrites(t *testing.T) {
	t.Parallel()
	const (
		depsAnnotation = `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"cm"},{"apiVersion":"v1","kind":"ServiceAccount","namespace":"ns","name":"sa1"}]`
		gotDeps        = "Normal GetDependenciesSucceed Get dependencies([ConfigMap/ns/cm ServiceAccount/ns/sa1]) succeed."
		synced         = "Normal SyncScheduleResultToDependenciesSucceed Sync schedule results to dependencies succeed."
		appRB          = "app-deployment"
		cmRB, saRB     = "cm-configmap", "sa1-serviceaccount"
		annotatePatch  = `{"metadata":{"annotations":{"resourcebinding.karmada.io/dependencies":` // + value
	)
	tmpl := func() runtime.Object {
		return deployment("app", map[string]any{"serviceAccountName": "sa1", "volumes": []any{configMapVolume("cm")}})
	}
	app := func(mods ...func(*workv1alpha2.ResourceBinding)) *workv1alpha2.ResourceBinding {
		rb := requirerBinding("app", policyv1alpha1.ConflictAbort, false, false)
		for _, m := range mods {
			m(rb)
		}
		return rb
	}
	annotated := func(rb *workv1alpha2.ResourceBinding) {
		rb.Annotations = map[string]string{workv1alpha2.BindingDependenciesAnnotationKey: depsAnnotation}
	}
	attached := func(kind, name string, requiredBy ...string) *workv1alpha2.ResourceBinding {
		return attachedBinding(kind, name, policyv1alpha1.ConflictAbort, false, requiredBy...)
	}
	tests := []struct {
		name       string
		bindings   []*workv1alpha2.ResourceBinding
		host       []runtime.Object
		key        string
		wantWrites []string
		// wantPatches are the patches wanted, by binding name.
		wantPatches map[string]string
		wantEvents  []string
	}{
		{
			name:     "new requirer: attached bindings created, dependencies recorded",
			bindings: []*workv1alpha2.ResourceBinding{app()},
			host:     []runtime.Object{tmpl(), object("ConfigMap", "cm"), object("ServiceAccount", "sa1")},
			wantWrites: []string{"create resourcebindings ns/" + cmRB, "create resourcebindings ns/" + saRB,
				"patch resourcebindings ns/" + appRB},
			wantPatches: map[string]string{appRB: annotatePatch + jsonString(depsAnnotation) + `}}}`},
			wantEvents:  []string{gotDeps, synced},
		},
		{
			name: "up to date: nothing",
			bindings: []*workv1alpha2.ResourceBinding{app(annotated),
				attached("ConfigMap", "cm", "app"), attached("ServiceAccount", "sa1", "app")},
			host: []runtime.Object{tmpl(), object("ConfigMap", "cm"), object("ServiceAccount", "sa1")},
		},
		{
			name: "requirer rescheduled: the attached bindings follow",
			bindings: []*workv1alpha2.ResourceBinding{
				app(annotated, func(rb *workv1alpha2.ResourceBinding) {
					rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 1}}
				}),
				attached("ConfigMap", "cm", "app"), attached("ServiceAccount", "sa1", "app")},
			host:       []runtime.Object{tmpl(), object("ConfigMap", "cm"), object("ServiceAccount", "sa1")},
			wantWrites: []string{"patch resourcebindings ns/" + cmRB, "patch resourcebindings ns/" + saRB},
			wantPatches: map[string]string{cmRB: `{"metadata":{"labels":{"` + DependedByLabel(testNS, appRB) + `":"app-id"},"resourceVersion":"7"},` +
				`"spec":{"conflictResolution":"Abort","preserveResourcesOnDeletion":false,` +
				`"requiredBy":[{"namespace":"ns","name":"app-deployment","clusters":[{"name":"m2","replicas":1}]}]}}`},
			wantEvents: []string{synced},
		},
		{
			name: "a dependency more: attached, the record rewritten",
			bindings: []*workv1alpha2.ResourceBinding{
				app(func(rb *workv1alpha2.ResourceBinding) {
					rb.Annotations = map[string]string{workv1alpha2.BindingDependenciesAnnotationKey: `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"cm"}]`}
				}),
				attached("ConfigMap", "cm", "app")},
			host:        []runtime.Object{tmpl(), object("ConfigMap", "cm"), object("ServiceAccount", "sa1")},
			wantWrites:  []string{"create resourcebindings ns/" + saRB, "patch resourcebindings ns/" + appRB},
			wantPatches: map[string]string{appRB: annotatePatch + jsonString(depsAnnotation) + `}}}`},
			wantEvents:  []string{gotDeps, synced},
		},
		{
			name:        "dependency not created yet: recorded, not attached",
			bindings:    []*workv1alpha2.ResourceBinding{app()},
			host:        []runtime.Object{tmpl(), object("ConfigMap", "cm")},
			wantWrites:  []string{"create resourcebindings ns/" + cmRB, "patch resourcebindings ns/" + appRB},
			wantPatches: map[string]string{appRB: annotatePatch + jsonString(depsAnnotation) + `}}}`},
			wantEvents:  []string{gotDeps, synced},
		},
		{
			name: "dependencies no longer propagated: released, annotation removed",
			bindings: []*workv1alpha2.ResourceBinding{app(annotated, func(rb *workv1alpha2.ResourceBinding) { rb.Spec.PropagateDeps = false }),
				attached("ConfigMap", "cm", "app"), attached("ServiceAccount", "sa1", "app", "other")},
			host: []runtime.Object{tmpl(), object("ConfigMap", "cm"), object("ServiceAccount", "sa1")},
			wantWrites: []string{"delete resourcebindings ns/" + cmRB, "patch resourcebindings ns/" + appRB,
				"patch resourcebindings ns/" + saRB},
			wantPatches: map[string]string{
				appRB: annotatePatch + `null}}}`,
				saRB: `{"metadata":{"labels":{"` + DependedByLabel(testNS, appRB) + `":null},"resourceVersion":"7"},` +
					`"spec":{"conflictResolution":"Abort","preserveResourcesOnDeletion":false,` +
					`"requiredBy":[{"namespace":"ns","name":"other-deployment","clusters":[{"name":"m1","replicas":1}]}]}}`,
			},
		},
		{
			name:       "requirer gone: its attached bindings released",
			bindings:   []*workv1alpha2.ResourceBinding{attached("ConfigMap", "cm", "app"), attached("ServiceAccount", "sa1", "app")},
			host:       []runtime.Object{tmpl(), object("ConfigMap", "cm"), object("ServiceAccount", "sa1")},
			wantWrites: []string{"delete resourcebindings ns/" + cmRB, "delete resourcebindings ns/" + saRB},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.bindings, tc.host...)
			if err := f.c.reconcile(context.Background(), testNS+"/"+appRB); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes()); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			for name, want := range tc.wantPatches {
				jsonEqual(t, want, f.patchOf(t, name))
			}
			if diff := cmp.Diff(tc.wantEvents, f.events()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, want, got string) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad wanted JSON: %v\n%s", err, want)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, got)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("patch (-want +got):\n%s\ngot: %s", diff, got)
	}
}
