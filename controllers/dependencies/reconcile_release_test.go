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

func TestReleaseReconciler(t *testing.T) {
	t.Parallel()
	label := DependedByLabel(testNS, "app-deployment")
	attached := func(name string, requiredBy ...string) *workv1alpha2.ResourceBinding {
		return attachedBinding("ConfigMap", name, policyv1alpha1.ConflictAbort, false, requiredBy...)
	}
	const otherSnap = `{"namespace":"ns","name":"other-deployment","clusters":[{"name":"m1","replicas":1}]}`
	unlabel := func(name, spec string) string {
		return "patch ns/" + name + `-configmap {"metadata":{"labels":{"` + label + `":null},"resourceVersion":"7"},"spec":{` + spec + `}}`
	}
	tests := []struct {
		name       string
		stored     []*workv1alpha2.ResourceBinding
		keep       []string
		errs       map[string]error
		wantWrites []string
		wantErr    bool
	}{
		{name: "nothing attached: nothing", stored: []*workv1alpha2.ResourceBinding{attached("cm", "other")}},
		{name: "still depended on: kept", stored: []*workv1alpha2.ResourceBinding{attached("cm", "app")}, keep: []string{"cm-configmap"}},
		{name: "required by app only: deleted", stored: []*workv1alpha2.ResourceBinding{attached("cm", "app")},
			wantWrites: []string{"delete ns/cm-configmap"}},
		{name: "required by others too: app's snapshot and label removed, their policy applied",
			stored:     []*workv1alpha2.ResourceBinding{attached("cm", "other", "app"), requirerBinding("other", policyv1alpha1.ConflictOverwrite, true, false)},
			wantWrites: []string{unlabel("cm", `"conflictResolution":"Overwrite","preserveResourcesOnDeletion":true,"requiredBy":[`+otherSnap+`]`)}},
		{name: "claimed by a policy of its own: kept, unlabelled",
			stored: []*workv1alpha2.ResourceBinding{func() *workv1alpha2.ResourceBinding {
				a := attached("cm", "app")
				a.Spec.Placement = &policyv1alpha1.Placement{}
				return a
			}()},
			wantWrites: []string{unlabel("cm", `"requiredBy":[]`)}},
		{name: "gone meanwhile: no error", stored: []*workv1alpha2.ResourceBinding{attached("cm", "app")},
			errs:       map[string]error{"delete": apierrors.NewNotFound(workv1alpha2.Resource("resourcebindings"), "cm-configmap")},
			wantWrites: []string{"delete ns/cm-configmap"}},
		{name: "a write fails: the others still done, the error returned", wantErr: true,
			stored:     []*workv1alpha2.ResourceBinding{attached("a", "app"), attached("b", "app")},
			errs:       map[string]error{"delete": errors.New("etcd down")},
			wantWrites: []string{"delete ns/a-configmap", "delete ns/b-configmap"}},
		{name: "the cache unreadable: an error", errs: map[string]error{"list": errors.New("closed")}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeBindings{stored: tc.stored, errs: tc.errs}
			keep := map[string]bool{}
			for _, k := range tc.keep {
				keep[k] = true
			}
			r := releaseReconciler{bindings: f.api()}
			if err := r.reconcile(context.Background(), testNS, "app-deployment", keep); (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
		})
	}
}
