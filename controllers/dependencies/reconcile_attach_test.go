package dependencies

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestAttachReconciler(t *testing.T) {
	t.Parallel()
	const cmRB = "ns/cm-configmap"
	label := DependedByLabel(testNS, "app-deployment")
	cm := dependency{APIVersion: "v1", Kind: "ConfigMap", Namespace: testNS, Name: "cm"}
	app := func() *workv1alpha2.ResourceBinding {
		return requirerBinding("app", policyv1alpha1.ConflictAbort, false, false)
	}
	patch := func(requiredBy, policy string) string {
		return "patch " + cmRB + ` {"metadata":{"labels":{"` + label + `":"app-id"},"resourceVersion":"7"},"spec":{` + policy + `"requiredBy":[` + requiredBy + `]}}`
	}
	const (
		appSnap   = `{"namespace":"ns","name":"app-deployment","clusters":[{"name":"m1","replicas":1}]}`
		otherSnap = `{"namespace":"ns","name":"other-deployment","clusters":[{"name":"m1","replicas":1}]}`
		abort     = `"conflictResolution":"Abort","preserveResourcesOnDeletion":false,`
		overwrite = `"conflictResolution":"Overwrite","preserveResourcesOnDeletion":false,`
	)
	tests := []struct {
		name      string
		objectErr error
		object    func(*unstructured.Unstructured) // changes the dependency
		stored    []*workv1alpha2.ResourceBinding
		rb        func(*workv1alpha2.ResourceBinding) // changes app's binding
		errs      map[string]error
		wantWrote bool
		wantErr   bool
		// wantWrites are the writes, wantEvents the events on the attached binding.
		wantWrites []string
		wantEvents []string
	}{
		{name: "the dependency does not exist yet: nothing",
			objectErr: apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "cm")},
		{name: "the dependency unreadable: an error", objectErr: errors.New("forbidden"), wantErr: true},
		{name: "the dependency claimed by another system: not attached",
			object: func(u *unstructured.Unstructured) {
				u.SetLabels(map[string]string{workv1alpha2.ResourceTemplateClaimedByLabel: "ServiceExport"})
			}},
		{name: "no attached binding: created", wantWrote: true, wantWrites: []string{"create " + cmRB}},
		{name: "the create finds one the cache lacks: an error", errs: map[string]error{"create": apierrors.NewAlreadyExists(workv1alpha2.Resource("resourcebindings"), "cm-configmap")},
			wantWrote: true, wantErr: true, wantWrites: []string{"create " + cmRB}},
		{name: "attached binding up to date: nothing", stored: []*workv1alpha2.ResourceBinding{attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictAbort, false, "app")}},
		{name: "another requirer: app's snapshot added", wantWrote: true,
			stored: []*workv1alpha2.ResourceBinding{
				attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictAbort, false, "other"),
				requirerBinding("other", policyv1alpha1.ConflictAbort, false, false)},
			wantWrites: []string{patch(otherSnap+","+appSnap, abort)}},
		{name: "app moved: its snapshot replaced", wantWrote: true,
			stored:     []*workv1alpha2.ResourceBinding{attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictAbort, false, "app")},
			rb:         func(rb *workv1alpha2.ResourceBinding) { rb.Spec.Clusters[0].Name = "m2" },
			wantWrites: []string{patch(`{"namespace":"ns","name":"app-deployment","clusters":[{"name":"m2","replicas":1}]}`, abort)}},
		{name: "requirers disagree: Overwrite wins, the conflict said", wantWrote: true,
			stored: []*workv1alpha2.ResourceBinding{
				attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictAbort, false, "other", "app"),
				requirerBinding("other", policyv1alpha1.ConflictOverwrite, false, false)},
			wantWrites: []string{patch(otherSnap+","+appSnap, overwrite)},
			wantEvents: []string{"Warning DependencyPolicyConflict " + conflictMessagePrefix + conflictResolutionConflicted + "."}},
		{name: "the dependency has a policy of its own: the requirers' not applied", wantWrote: true,
			stored: []*workv1alpha2.ResourceBinding{func() *workv1alpha2.ResourceBinding {
				a := attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictOverwrite, true)
				a.Spec.Placement = &policyv1alpha1.Placement{}
				return a
			}()},
			wantWrites: []string{patch(appSnap, "")}},
		{name: "the patch fails: its error", wantErr: true, errs: map[string]error{"patch": errors.New("etcd down")},
			stored:     []*workv1alpha2.ResourceBinding{attachedBinding("ConfigMap", "cm", policyv1alpha1.ConflictAbort, false)},
			wantWrites: []string{patch(appSnap, abort)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rb := app()
			if tc.rb != nil {
				tc.rb(rb)
			}
			f := &fakeBindings{stored: tc.stored, errs: tc.errs}
			var events []string
			api := f.api()
			var created *workv1alpha2.ResourceBinding
			create := api.create
			api.create = func(ctx context.Context, b *workv1alpha2.ResourceBinding) error { created = b; return create(ctx, b) }
			r := attachReconciler{
				getObject: func(_ context.Context, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, error) {
					if gvk.Kind != "ConfigMap" || ns != testNS || name != "cm" {
						t.Errorf("read %v %s/%s", gvk, ns, name)
					}
					obj := object("ConfigMap", "cm")
					if tc.object != nil {
						tc.object(obj)
					}
					return obj, tc.objectErr
				},
				bindings: api,
				event: func(obj runtime.Object, eventType, reason, msg string) {
					if a, ok := obj.(*workv1alpha2.ResourceBinding); !ok || a.Name != "cm-configmap" {
						t.Errorf("event on %v", obj)
					}
					events = append(events, eventType+" "+reason+" "+msg)
				},
			}
			wrote, err := r.reconcile(context.Background(), rb, cm)
			if wrote != tc.wantWrote || (err != nil) != tc.wantErr {
				t.Errorf("got wrote %v, error %v; want wrote %v, error %v", wrote, err, tc.wantWrote, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes); diff != "" {
				t.Errorf("writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if created != nil {
				if created.Labels[label] != "app-id" || len(created.OwnerReferences) != 1 || created.OwnerReferences[0].UID != "cm-uid" ||
					created.Spec.Resource.Kind != "ConfigMap" || requiredByNames(created)[0] != "app-deployment" ||
					created.Spec.ConflictResolution != policyv1alpha1.ConflictAbort || len(created.Finalizers) != 1 {
					t.Errorf("created %+v, want the ConfigMap's binding, owned by it, required by app with its policy", created)
				}
			}
		})
	}
}
