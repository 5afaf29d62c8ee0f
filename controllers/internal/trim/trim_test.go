package trim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	typed := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}, ManagedFields: managed}}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"name": "b", "managedFields": []any{map[string]any{"manager": "kubectl"}},
	}, "spec": map[string]any{"x": int64(1)}}}
	tombstone := cache.DeletedFinalStateUnknown{Key: "c"}

	for name, tc := range map[string]struct {
		in    any
		check func(t *testing.T, out any)
	}{
		"typed": {typed, func(t *testing.T, out any) {
			cm := out.(*corev1.ConfigMap)
			if cm.ManagedFields != nil || cm.Name != "a" || cm.Labels["k"] != "v" {
				t.Errorf("got %+v, want the object without managedFields only", cm.ObjectMeta)
			}
		}},
		"unstructured": {u, func(t *testing.T, out any) {
			o := out.(*unstructured.Unstructured)
			if _, found, _ := unstructured.NestedFieldNoCopy(o.Object, "metadata", "managedFields"); found {
				t.Error("managedFields kept")
			}
			if o.GetName() != "b" || o.Object["spec"] == nil {
				t.Errorf("got %v, want name and spec kept", o.Object)
			}
		}},
		"not an object": {tombstone, func(t *testing.T, out any) {
			if out.(cache.DeletedFinalStateUnknown).Key != "c" {
				t.Errorf("got %v", out)
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := ManagedFields(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, out)
		})
	}
}

func TestManagedFieldsOfShared(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	shared := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"}, ManagedFields: managed}, Data: map[string]string{"d": "1"}}
	out, err := ManagedFieldsOfShared(shared)
	if err != nil {
		t.Fatal(err)
	}
	cm := out.(*corev1.ConfigMap)
	if cm == shared || cm.ManagedFields != nil || cm.Name != "a" || cm.Labels["k"] != "v" || cm.Data["d"] != "1" {
		t.Errorf("got %+v, want a copy without managedFields", cm)
	}
	if len(shared.ManagedFields) != 1 {
		t.Error("the shared object lost its managedFields")
	}
	bare := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}
	if out, _ := ManagedFieldsOfShared(bare); out != any(bare) {
		t.Error("an object without managedFields was copied")
	}
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
		"name": "c", "managedFields": []any{map[string]any{"manager": "kubectl"}},
	}}}
	out, _ = ManagedFieldsOfShared(u)
	if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields"); !found {
		t.Error("the shared unstructured object lost its managedFields")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(out.(*unstructured.Unstructured).Object, "metadata", "managedFields"); found {
		t.Error("the copy kept managedFields")
	}
}
