package member

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

func appliedDeployment(rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"namespace": "web", "name": "nginx", "uid": "u1", "resourceVersion": rv,
			"labels": map[string]any{"work.karmada.io/permanent-id": "p1", "app": "nginx"},
			"annotations": map[string]any{
				"work.karmada.io/namespace":                "karmada-es-member1",
				"work.karmada.io/name":                     "nginx-687f7fb96f",
				"deployment.kubernetes.io/revision":        "1",
				searchv1alpha1.CachedFromClusterAnnotation: "member1",
			},
			"managedFields": []any{map[string]any{"manager": "flotilla", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}},
		},
		"spec":   map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
}

// TestCompact: a compact informer keeps an object as its JSON and the
// metadata its keys and its readers' handlers read (the labels their
// selectors read, the annotations they named); a reader decodes the whole
// object but its managedFields and the search cache's mark, a new copy at
// every read.
func TestCompact(t *testing.T) {
	t.Parallel()
	in := appliedDeployment("7")
	want := in.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(want.Object, "metadata", "annotations", searchv1alpha1.CachedFromClusterAnnotation)

	c := &compactor{labels: []string{"work.karmada.io/permanent-id"}, annotations: []string{"work.karmada.io/name", "work.karmada.io/namespace"}}
	out, err := c.transform(in)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := out.(*Compact)
	if !ok {
		t.Fatalf("got %T, want *Compact", out)
	}
	if key, err := cache.MetaNamespaceKeyFunc(got); err != nil || key != "web/nginx" {
		t.Errorf("informer key %q (%v), want web/nginx", key, err)
	}
	if got.ResourceVersion != "7" || got.UID != "u1" {
		t.Errorf("metadata %+v, want resourceVersion 7 and uid u1", got.ObjectMeta)
	}
	if len(got.Labels) != 1 || got.Labels["work.karmada.io/permanent-id"] != "p1" {
		t.Errorf("labels %v, want the selected one only", got.Labels)
	}
	if len(got.Annotations) != 2 || got.Annotations["work.karmada.io/name"] != "nginx-687f7fb96f" {
		t.Errorf("annotations %v, want the two named only", got.Annotations)
	}
	read, ok := Unstructured(got)
	if !ok || !reflect.DeepEqual(read.Object, want.Object) {
		t.Errorf("read back %v, want %v", read, want)
	}
	// Each read is the caller's own.
	read.Object["spec"] = nil
	if again, _ := Unstructured(got); again.Object["spec"] == nil {
		t.Error("a change to one read shows in the next")
	}
	cp := got.DeepCopyObject().(*Compact)
	cp.Annotations["work.karmada.io/name"] = "other"
	if got.Annotations["work.karmada.io/name"] != "nginx-687f7fb96f" {
		t.Error("DeepCopyObject shares the annotations")
	}
	// An unstructured object is read as a copy too.
	u := appliedDeployment("8")
	if c, _ := Unstructured(u); c == u {
		t.Error("Unstructured returned the informer's own object")
	}

	for _, other := range []any{cache.DeletedFinalStateUnknown{Key: "web/nginx"}, "not an object"} {
		if got, err := c.transform(other); err != nil || !reflect.DeepEqual(got, other) {
			t.Errorf("transform(%v) = %v, %v; want it unchanged", other, got, err)
		}
	}
}

// TestCompactOf: a template kept compact has all of its metadata but
// managedFields, and reads back as the object without them.
func TestCompactOf(t *testing.T) {
	t.Parallel()
	in := appliedDeployment("7")
	in.SetGeneration(3)
	in.SetFinalizers([]string{"f"})
	in.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o", UID: "u2"}})
	now := metav1.Now()
	in.SetDeletionTimestamp(&now)
	want := in.DeepCopy()
	unstructured.RemoveNestedField(want.Object, "metadata", "managedFields")

	got, err := CompactOf(in.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if got.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	m := got.ObjectMeta
	if m.Namespace != "web" || m.Name != "nginx" || m.UID != "u1" || m.ResourceVersion != "7" || m.Generation != 3 ||
		m.DeletionTimestamp == nil || len(m.Finalizers) != 1 || len(m.OwnerReferences) != 1 ||
		!reflect.DeepEqual(m.Labels, in.GetLabels()) || !reflect.DeepEqual(m.Annotations, in.GetAnnotations()) {
		t.Errorf("metadata %+v, want all of %v", m, in.Object["metadata"])
	}
	read, err := got.Object()
	if err != nil || !reflect.DeepEqual(read.Object, want.Object) {
		t.Errorf("read back %v (%v), want %v", read, err, want)
	}
}
