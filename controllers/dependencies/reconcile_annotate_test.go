package dependencies

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestAnnotateReconciler(t *testing.T) {
	t.Parallel()
	cm := dependency{APIVersion: "v1", Kind: "ConfigMap", Namespace: testNS, Name: "cm"}
	const cmJSON = `[{"apiVersion":"v1","kind":"ConfigMap","namespace":"ns","name":"cm"}]`
	tests := []struct {
		name       string
		annotation *string // the stored dependencies annotation
		deps       []dependency
		patchErr   error
		wantPatch  string // "" none
		wantWrote  bool
		wantErr    bool
	}{
		{name: "no dependencies, none recorded: nothing"},
		{name: "the same recorded: nothing", annotation: ptrTo(cmJSON), deps: []dependency{cm}},
		{name: "new dependencies: recorded", deps: []dependency{cm}, wantWrote: true,
			wantPatch: `{"metadata":{"annotations":{"resourcebinding.karmada.io/dependencies":` + jsonString(cmJSON) + `}}}`},
		{name: "other dependencies recorded: replaced", annotation: ptrTo(`[]`), deps: []dependency{cm}, wantWrote: true,
			wantPatch: `{"metadata":{"annotations":{"resourcebinding.karmada.io/dependencies":` + jsonString(cmJSON) + `}}}`},
		{name: "no dependencies any more: the annotation removed, nothing recorded", annotation: ptrTo(cmJSON),
			wantPatch: `{"metadata":{"annotations":{"resourcebinding.karmada.io/dependencies":null}}}`},
		{name: "the binding is gone: no error", deps: []dependency{cm},
			patchErr:  apierrors.NewNotFound(workv1alpha2.Resource("resourcebindings"), "app-deployment"),
			wantPatch: `{"metadata":{"annotations":{"resourcebinding.karmada.io/dependencies":` + jsonString(cmJSON) + `}}}`},
		{name: "the patch fails: its error", deps: []dependency{cm}, patchErr: errors.New("etcd down"), wantErr: true,
			wantPatch: `{"metadata":{"annotations":{"resourcebinding.karmada.io/dependencies":` + jsonString(cmJSON) + `}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rb := requirerBinding("app", policyv1alpha1.ConflictAbort, false, false)
			if tc.annotation != nil {
				rb.Annotations = map[string]string{workv1alpha2.BindingDependenciesAnnotationKey: *tc.annotation}
			}
			var patches []string
			r := annotateReconciler{patch: func(_ context.Context, ns, name string, patch []byte) error {
				if ns != testNS || name != "app-deployment" {
					t.Errorf("patched %s/%s", ns, name)
				}
				patches = append(patches, string(patch))
				return tc.patchErr
			}}
			wrote, err := r.reconcile(context.Background(), rb, tc.deps)
			if wrote != tc.wantWrote || (err != nil) != tc.wantErr {
				t.Errorf("got wrote %v, error %v; want wrote %v, error %v", wrote, err, tc.wantWrote, tc.wantErr)
			}
			var want []string
			if tc.wantPatch != "" {
				want = []string{tc.wantPatch}
			}
			if diff := cmp.Diff(want, patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
