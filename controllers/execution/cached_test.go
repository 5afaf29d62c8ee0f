package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

func appliedDeployment(rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"namespace": "web", "name": "nginx", "uid": "u1", "resourceVersion": rv,
			"labels": map[string]any{workv1alpha2.WorkPermanentIDLabel: "p1"},
			"annotations": map[string]any{
				workv1alpha2.WorkNamespaceAnnotation: names.ExecutionNamespace("member1"),
				workv1alpha2.WorkNameAnnotation:      "nginx-687f7fb96f",
				"deployment.kubernetes.io/revision":  "1",
			},
			"managedFields": []any{map[string]any{"manager": "flotilla", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
		},
		"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
}

// TestMemberEventHandler: the handler enqueues the Work of an object
// applied to its member, added, changed or deleted (also as a tombstone),
// not for an update that did not change the resourceVersion, and not for
// an object of another member's Work.
func TestMemberEventHandler(t *testing.T) {
	obj := func(rv string) any { return appliedDeployment(rv) }
	key := names.ExecutionNamespace("member1") + "/nginx-687f7fb96f"
	for name, tc := range map[string]struct {
		fire func(h cache.ResourceEventHandler)
		want int
	}{
		"add":    {func(h cache.ResourceEventHandler) { h.OnAdd(obj("1"), false) }, 1},
		"update": {func(h cache.ResourceEventHandler) { h.OnUpdate(obj("1"), obj("2")) }, 1},
		"resync": {func(h cache.ResourceEventHandler) { h.OnUpdate(obj("1"), obj("1")) }, 0},
		"delete": {func(h cache.ResourceEventHandler) { h.OnDelete(obj("1")) }, 1},
		"tombstone": {func(h cache.ResourceEventHandler) {
			h.OnDelete(cache.DeletedFinalStateUnknown{Key: "web/nginx", Obj: obj("1")})
		}, 1},
		"another member's": {func(h cache.ResourceEventHandler) {
			o := appliedDeployment("1")
			o.SetAnnotations(map[string]string{workv1alpha2.WorkNamespaceAnnotation: names.ExecutionNamespace("member2"), workv1alpha2.WorkNameAnnotation: "w"})
			h.OnAdd(o, false)
		}, 0},
	} {
		t.Run(name, func(t *testing.T) {
			var queued []string
			tc.fire(memberEventHandler("member1", func(k string) { queued = append(queued, k) }))
			if len(queued) != tc.want {
				t.Fatalf("queued %v, want %d keys", queued, tc.want)
			}
			if tc.want == 1 && queued[0] != key {
				t.Errorf("queued %q, want %q", queued[0], key)
			}
		})
	}
}
