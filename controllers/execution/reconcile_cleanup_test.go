package execution

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestReleasePatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		object string
		want   string
	}{
		{"Karmada's metadata is removed, the rest stays", `
metadata:
  name: web
  labels: {app: web, karmada.io/managed: "true", work.karmada.io/permanent-id: x, propagationpolicy.karmada.io/permanent-id: p}
  annotations: {note: kept, work.karmada.io/name: w, work.karmada.io/namespace: karmada-es-m, resourcetemplate.karmada.io/uid: u}`,
			`{"metadata":{"annotations":{"resourcetemplate.karmada.io/uid":null,"work.karmada.io/name":null,"work.karmada.io/namespace":null},"labels":{"karmada.io/managed":null,"propagationpolicy.karmada.io/permanent-id":null,"work.karmada.io/permanent-id":null}}}`},
		{"only labels", `{metadata: {name: web, labels: {karmada.io/managed: "true"}}}`, `{"metadata":{"labels":{"karmada.io/managed":null}}}`},
		{"nothing to remove", `{metadata: {name: web, labels: {app: web}}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			patch, ok := releasePatch(obj(t, tc.object))
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v", ok)
			}
			if diff := cmp.Diff(tc.want, string(patch)); ok && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTemplateRef(t *testing.T) {
	t.Parallel()
	ref, err := templateRef(obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default, annotations: {resourcetemplate.karmada.io/uid: abc}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Namespace != "default" || ref.Name != "web" || ref.UID != "abc" {
		t.Errorf("ref %+v", ref)
	}
	if _, err := templateRef(obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}`)); err == nil {
		t.Error("a manifest without a template uid has a template")
	}
}

func TestCleanupReconciler(t *testing.T) {
	t.Parallel()
	// ours is a member object the Work applied: its permanent id.
	ours := func(name string, annotations map[string]string) *unstructured.Unstructured {
		u := memberObject(configMap(name, nil, annotations))
		u.SetUID(types.UID("uid-" + name))
		return u
	}
	other := ours("other", nil)
	labels := other.GetLabels()
	labels[workv1alpha2.WorkPermanentIDLabel] = "someone-else"
	other.SetLabels(labels)
	unmanaged := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "theirs", "namespace": "default"}}}
	adopted := ours("adopted", map[string]string{workv1alpha2.AdoptedAnnotation: "true"})
	thing := map[string]any{"apiVersion": "x/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}}
	tests := []struct {
		name       string
		manifests  []map[string]any
		member     []*unstructured.Unstructured
		preserve   bool
		noID       bool
		errs       map[string][]error
		wantWrites []string
		wantLeft   []string
		wantErr    bool
	}{
		{name: "ours: deleted", manifests: []map[string]any{configMap("cm", nil, nil)}, member: []*unstructured.Unstructured{ours("cm", nil)},
			wantWrites: []string{"delete configmaps/default/cm"}},
		{name: "preserved: released, not deleted", preserve: true, manifests: []map[string]any{configMap("cm", nil, nil)},
			member: []*unstructured.Unstructured{ours("cm", nil)}, wantWrites: []string{"patch configmaps/default/cm"}, wantLeft: []string{"cm"}},
		{name: "adopted: released, never deleted", manifests: []map[string]any{configMap("adopted", nil, nil)},
			member: []*unstructured.Unstructured{adopted}, wantWrites: []string{"patch configmaps/default/adopted"}, wantLeft: []string{"adopted"}},
		{name: "another Work's, someone else's: left alone",
			manifests: []map[string]any{configMap("other", nil, nil), configMap("theirs", nil, nil)},
			member:    []*unstructured.Unstructured{other, unmanaged}, wantLeft: []string{"other", "theirs"}},
		{name: "a Work without permanent id: nothing touched", noID: true, manifests: []map[string]any{configMap("cm", nil, nil)},
			member: []*unstructured.Unstructured{ours("cm", nil)}, wantLeft: []string{"cm"}},
		{name: "absent, an unknown kind, an unreadable manifest: nothing",
			manifests: []map[string]any{configMap("cm", nil, nil), thing, {"kind": "ConfigMap"}}},
		{name: "gone meanwhile: no error", manifests: []map[string]any{configMap("cm", nil, nil)}, member: []*unstructured.Unstructured{ours("cm", nil)},
			errs:       map[string][]error{"delete": {apierrors.NewNotFound(configMapsGVR.GroupResource(), "cm")}},
			wantWrites: []string{"delete configmaps/default/cm"}, wantLeft: []string{"cm"}},
		{name: "a delete fails: the others still done, the error returned",
			manifests: []map[string]any{configMap("a", nil, nil), configMap("b", nil, nil)}, member: []*unstructured.Unstructured{ours("a", nil), ours("b", nil)},
			errs:       map[string][]error{"delete": {errors.New("etcd down")}},
			wantWrites: []string{"delete configmaps/default/a", "delete configmaps/default/b"}, wantLeft: []string{"a"}, wantErr: true},
		{name: "the member unreadable: the error, nothing deleted", manifests: []map[string]any{configMap("cm", nil, nil)},
			member: []*unstructured.Unstructured{ours("cm", nil)}, errs: map[string][]error{"get": {errors.New("refused")}},
			wantLeft: []string{"cm"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeMember(tc.member...)
			for verb, errs := range tc.errs {
				f.errs[verb] = errs
			}
			work := newWork(t, "cm", tc.manifests...)
			work.Spec.PreserveResourcesOnDeletion = ptr.To(tc.preserve)
			if tc.noID {
				work.Labels = nil
			}
			r := cleanupReconciler{objects: f.api()}
			if err := r.reconcile(context.Background(), work); (err != nil) != tc.wantErr {
				t.Errorf("error %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes); diff != "" {
				t.Errorf("member writes (-want +got):\n%s", diff)
			}
			var left []string
			for _, o := range f.objects {
				left = append(left, o.GetName())
			}
			if diff := cmp.Diff(tc.wantLeft, left, cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("left in the member (-want +got):\n%s", diff)
			}
			for _, p := range f.patches {
				if !strings.Contains(p, `"karmada.io/managed":null`) || !strings.Contains(p, `"work.karmada.io/permanent-id":null`) {
					t.Errorf("release patch %s keeps Karmada's labels", p)
				}
			}
		})
	}
}
