package semantics

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// The search cache answers a list of a resource no
// ResourceRegistry caches with 200 and an empty <Kind>List, as Karmada
// does; a kind no member serves stays 404.
func TestSearchUncachedResourceIsEmptyList(t *testing.T) {
	const path = "/apis/search.karmada.io/v1alpha1/search/cache/apis/rbac.authorization.k8s.io/v1/clusterroles"
	out, err := framework.Kubectl(t, "get", "--raw", path)
	if err != nil {
		t.Fatalf("GET %s: %v %s", path, err, out)
	}
	var list struct {
		Kind, APIVersion string
		Items            []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if list.Kind != "ClusterRoleList" || list.APIVersion != "rbac.authorization.k8s.io/v1" || list.Items == nil || len(list.Items) != 0 {
		t.Errorf("GET %s: want an empty ClusterRoleList, got %s", path, out)
	}
	// Paging options are accepted as for a cached resource.
	if out, err := framework.Kubectl(t, "get", "--raw", path+"?limit=10"); err != nil {
		t.Errorf("with limit: %v %s", err, out)
	}
	const unknown = "/apis/search.karmada.io/v1alpha1/search/cache/apis/example.io/v1/widgets"
	if out, err := framework.Kubectl(t, "get", "--raw", unknown); err == nil {
		t.Errorf("GET %s: want 404, got %s", unknown, out)
	}
}

// The control plane adds no kubernetes.io/pvc-protection
// finalizer to a PVC template (as Karmada's apiserver disables
// StorageObjectInUseProtection), so a namespace holding one finishes
// deleting.
func TestPVCTemplateNamespaceDeletes(t *testing.T) {
	ns := "pvc-template"
	if out, err := framework.Kubectl(t, "create", "namespace", ns); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	host := framework.HostClient(t)
	t.Cleanup(func() { _ = host.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	created, err := host.CoreV1().PersistentVolumeClaims(ns).Create(t.Context(), pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(created.Finalizers, "kubernetes.io/pvc-protection") {
		t.Errorf("the PVC template got finalizers %v", created.Finalizers)
	}
	if err := host.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		n, err := host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		}
		if err != nil {
			return err.Error()
		}
		left, _ := host.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		var fin [][]string
		if left != nil {
			for _, p := range left.Items {
				fin = append(fin, p.Finalizers)
			}
		}
		return fmt.Sprintf("namespace %s is %s; PVC finalizers left %v", ns, n.Status.Phase, fin)
	})
}
