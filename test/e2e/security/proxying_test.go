package security

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestProxyingWritesRevealNothing: a ConfigMap that exists in member1 and
// member2, in a namespace the caller may not read in either, answers a
// write through search's proxying endpoint exactly as a ConfigMap that
// exists nowhere (404), not 409 "ambiguous objects in clusters [...]".
func TestProxyingWritesRevealNothing(t *testing.T) {
	ns := "hidden-" + fmt.Sprint(time.Now().UnixNano()%100000)
	for _, m := range []string{"member1", "member2"} {
		member := framework.MemberClient(t, m)
		if _, err := member.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = member.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "payroll", Namespace: ns}, Data: map[string]string{"k": "v"}}
		if _, err := member.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	karmada := framework.Karmada(t)
	reg := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "hidden-configmaps"}, Spec: searchv1alpha1.ResourceRegistrySpec{
		TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2"}},
		ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns}},
	}}
	if _, err := karmada.SearchV1alpha1().ResourceRegistries().Create(t.Context(), reg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = karmada.SearchV1alpha1().ResourceRegistries().Delete(context.Background(), reg.Name, metav1.DeleteOptions{})
	})
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		r, err := karmada.SearchV1alpha1().ResourceRegistries().Get(ctx, reg.Name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(r.Status.Conditions, "Ready"); c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != r.Generation {
			return fmt.Sprintf("registry not Ready: %+v", c)
		}
		return ""
	})

	// eve may use proxying and reach both members, and may write
	// ConfigMaps there, but not read them.
	grant(t, framework.HostClient(t), "eve-proxying", serviceAccount("eve"),
		rbacv1.PolicyRule{APIGroups: []string{"search.karmada.io"}, Resources: []string{"proxying/proxy"}, Verbs: []string{"*"}},
		rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1", "member2"}, Verbs: []string{"*"}})
	for _, m := range []string{"member1", "member2"} {
		grant(t, framework.MemberClient(t, m), "eve-writes-configmaps", user("system:serviceaccount:default:eve"),
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"patch", "update"}})
	}
	// The admin, who may read both, is told the name is ambiguous: the
	// cache holds the ConfigMap in both members.
	admin, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	admin = rest.CopyConfig(admin)
	admin.Host += "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		_, err := kubernetes.NewForConfigOrDie(admin).CoreV1().ConfigMaps(ns).Patch(ctx, "payroll", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})
		if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "member1") || !strings.Contains(err.Error(), "member2") {
			return fmt.Sprintf("the admin's patch: %v, want 409 naming member1 and member2", err)
		}
		return ""
	})
	eve := rest.CopyConfig(framework.ServiceAccountConfig(t, "eve"))
	eve.Host += "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
	configMaps := kubernetes.NewForConfigOrDie(eve).CoreV1().ConfigMaps(ns)
	patch := []byte(`{"metadata":{"labels":{"touched":"by-eve"}}}`)
	status := func(name string) metav1.Status {
		_, err := configMaps.Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{})
		var se *apierrors.StatusError
		if err == nil || !apierrors.IsNotFound(err) {
			t.Errorf("patch of %s: %v, want NotFound", name, err)
			return metav1.Status{}
		}
		if !errors.As(err, &se) {
			t.Fatalf("patch of %s: %T %v", name, err, err)
		}
		return se.ErrStatus
	}
	hidden, missing := status("payroll"), status("no-such-configmap")
	norm := func(s metav1.Status, name string) string {
		return strings.ReplaceAll(fmt.Sprintf("%d %s %s %+v", s.Code, s.Reason, s.Message, s.Details), name, "NAME")
	}
	if norm(hidden, "payroll") != norm(missing, "no-such-configmap") {
		t.Errorf("a hidden object answers differently from a missing one:\nhidden  %s\nmissing %s", norm(hidden, "payroll"), norm(missing, "no-such-configmap"))
	}
	// And nothing was written.
	for _, m := range []string{"member1", "member2"} {
		cm, err := framework.MemberClient(t, m).CoreV1().ConfigMaps(ns).Get(t.Context(), "payroll", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels["touched"] != "" {
			t.Errorf("%s: the hidden ConfigMap was changed: %v", m, cm.Labels)
		}
	}
}
