package security

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestSchedulingSubresourceNeedsItsOwnGrant: the bindings' scheduling
// subresource changes spec.clusters, so a caller allowed to write a
// binding's status (as a Karmada status writer is) but not its scheduling
// subresource is refused there, and the binding is unchanged.
func TestSchedulingSubresourceNeedsItsOwnGrant(t *testing.T) {
	admin, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	hc, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	const who = "binding-status-writer"
	grant(t, hc, who, user(who), rbacv1.PolicyRule{APIGroups: []string{workv1alpha2.GroupName},
		Resources: []string{"resourcebindings", "resourcebindings/status"}, Verbs: []string{"get", "patch"}})
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: who}
	as, err := versioned.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	ns := framework.Namespace(t, "sec-scheduling")
	rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Create(t.Context(), &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "written-by-hand", Namespace: ns},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rbs := as.WorkV1alpha2().ResourceBindings(ns)
	// The grant works where it applies...
	if _, err := rbs.Patch(t.Context(), rb.Name, types.MergePatchType, []byte(`{"status":{"schedulerObservedGeneration":1}}`),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("status write with the grant: %v", err)
	}
	// ...and not on the scheduling subresource.
	decision := []byte(`{"spec":{"clusters":[{"name":"member1","replicas":1}]}}`)
	_, err = rbs.Patch(t.Context(), rb.Name, types.MergePatchType, decision, metav1.PatchOptions{}, workv1alpha2.SchedulingSubresource)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a decision without a grant on resourcebindings/%s: %v, want 403", workv1alpha2.SchedulingSubresource, err)
	}
	got, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), rb.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Clusters) != 0 {
		t.Errorf("the refused decision wrote spec.clusters %v", got.Spec.Clusters)
	}
}
