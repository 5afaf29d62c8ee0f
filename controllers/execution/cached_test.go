package execution

import (
	"reflect"
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

// TestCompactObject: the member informers keep an applied object as its
// JSON and the metadata their keys and event handler read; a reconcile
// reads back the whole object but its managedFields.
func TestCompactObject(t *testing.T) {
	in := appliedDeployment("7")
	want := in.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")

	out, err := compactObject(in)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := out.(*cachedObject)
	if !ok {
		t.Fatalf("got %T, want *cachedObject", out)
	}
	if key, err := cache.MetaNamespaceKeyFunc(c); err != nil || key != "web/nginx" {
		t.Errorf("informer key %q (%v), want web/nginx", key, err)
	}
	if c.ResourceVersion != "7" || c.UID != "u1" {
		t.Errorf("metadata %+v, want resourceVersion 7 and uid u1", c.ObjectMeta)
	}
	if len(c.Annotations) != 2 || c.Annotations[workv1alpha2.WorkNameAnnotation] != "nginx-687f7fb96f" {
		t.Errorf("annotations %v, want the Work's two only", c.Annotations)
	}
	got, ok := cachedUnstructured(c)
	if !ok || !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("read back %v, want %v", got, want)
	}
	// Each read is the caller's own.
	got.Object["spec"] = nil
	if again, _ := cachedUnstructured(c); again.Object["spec"] == nil {
		t.Error("a change to one read shows in the next")
	}
	cp := c.DeepCopyObject().(*cachedObject)
	cp.Annotations[workv1alpha2.WorkNameAnnotation] = "other"
	if c.Annotations[workv1alpha2.WorkNameAnnotation] != "nginx-687f7fb96f" {
		t.Error("DeepCopyObject shares the annotations")
	}

	for _, other := range []any{cache.DeletedFinalStateUnknown{Key: "web/nginx"}, "not an object"} {
		if got, err := compactObject(other); err != nil || !reflect.DeepEqual(got, other) {
			t.Errorf("compactObject(%v) = %v, %v; want it unchanged", other, got, err)
		}
	}
}

// TestMemberEventHandlerOnCachedObjects: the handler enqueues the Work of
// a cached object, added, changed or deleted (also as a tombstone), and
// not for an update that did not change the resourceVersion.
func TestMemberEventHandlerOnCachedObjects(t *testing.T) {
	obj := func(rv string) any {
		o, _ := compactObject(appliedDeployment(rv))
		return o
	}
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
	} {
		t.Run(name, func(t *testing.T) {
			m := newMember("member1")
			defer m.queue.ShutDown()
			tc.fire(memberEventHandler(m))
			if got := m.queue.Len(); got != tc.want {
				t.Fatalf("%d keys queued, want %d", got, tc.want)
			}
			if tc.want == 1 {
				if k, _ := m.queue.Get(); k != key {
					t.Errorf("queued %q, want %q", k, key)
				}
			}
		})
	}
}
