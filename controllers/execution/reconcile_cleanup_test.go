package execution

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
