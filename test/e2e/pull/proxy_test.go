package pull

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

const proxyPrefix = "/apis/cluster.karmada.io/v1alpha1/clusters/"

// tomKubeconfig makes the control-plane service account tom, allowed to
// proxy to member3 only, and writes a kubeconfig whose server is member3's
// proxy.
func tomKubeconfig(t *testing.T) (string, *rest.Config) {
	t.Helper()
	tom := framework.ProxyServiceAccountConfig(t, "tom", "member3")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m3, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: tom, user: {token: %q}}]
contexts: [{name: m3, context: {cluster: m3, user: tom, namespace: default}}]
current-context: m3
`, tom.Host+proxyPrefix+"member3/proxy", base64.StdEncoding.EncodeToString(tom.CAData), tom.BearerToken)
	path := filepath.Join(t.TempDir(), "tom.kubeconfig")
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, tom
}

func kubectlAs(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	return framework.KubectlAt(t, kubeconfig, args...)
}

// TestPullProxy: with member3's Cluster pointing at an unroutable
// endpoint, tom's clusters/member3/proxy access (get, watch, logs -f, exec)
// works through the agent's tunnel, with member3's RBAC deciding.
func TestPullProxy(t *testing.T) {
	pullMember(t)
	ctx := t.Context()
	// Nothing may depend on reaching member3 directly.
	before, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"apiEndpoint":"https://10.255.255.1:6443"}}`)
	if _, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Patch(ctx, "member3", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// Afterwards member3 is as the test found it: its endpoint, and none
	// of the grant and pod made here.
	t.Cleanup(func() {
		ctx := context.Background()
		restore := fmt.Appendf(nil, `{"spec":{"apiEndpoint":%q}}`, before.Spec.APIEndpoint)
		_, _ = framework.Karmada(t).ClusterV1alpha1().Clusters().Patch(ctx, "member3", types.MergePatchType, restore, metav1.PatchOptions{})
		m3 := framework.MemberClient(t, "member3")
		_ = m3.RbacV1().RoleBindings("default").Delete(ctx, "tom-debug", metav1.DeleteOptions{})
		_ = m3.RbacV1().Roles("default").Delete(ctx, "tom-debug", metav1.DeleteOptions{})
		_ = m3.CoreV1().Pods("default").Delete(ctx, "edge", metav1.DeleteOptions{})
	})
	kc, tom := tomKubeconfig(t)
	proxied := rest.CopyConfig(tom)
	proxied.Host += proxyPrefix + "member3/proxy"
	tomAt3 := kubernetes.NewForConfigOrDie(proxied)

	// member3's own RBAC refuses tom until it grants him something.
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		_, err := tomAt3.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if apierrors.IsForbidden(err) && strings.Contains(err.Error(), "system:serviceaccount:default:tom") {
			return ""
		}
		return fmt.Sprintf("listing member3's pods before member3 grants it: %v, want member3's Forbidden naming tom", err)
	})
	m3 := framework.MemberClient(t, "member3")
	if _, err := m3.RbacV1().Roles("default").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "tom-debug"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "configmaps"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{""}, Resources: []string{"pods/portforward"}, Verbs: []string{"create", "get"}},
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m3.RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tom-debug"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tom-debug"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "tom"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "edge", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if _, err := m3.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		p, err := tomAt3.CoreV1().Pods("default").Get(ctx, "edge", metav1.GetOptions{})
		if err != nil {
			return "tom getting the pod through the tunnel: " + err.Error()
		}
		if p.Status.Phase != corev1.PodRunning {
			return "pod " + string(p.Status.Phase)
		}
		return ""
	})
	// Still nothing beyond the grant.
	if _, err := tomAt3.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("tom listed member3's nodes: %v, want Forbidden", err)
	}

	t.Run("watch", func(t *testing.T) { framework.CheckWatchStreams(t, tomAt3, m3) })
	t.Run("logs -f", func(t *testing.T) { framework.CheckLogsFollow(t, kc, "edge", framework.Member(t, "member3")) })

	t.Run("exec", func(t *testing.T) {
		out, err := kubectlAs(t, kc, "exec", "edge", "--", "echo", "hello-from-edge")
		if err != nil || !strings.Contains(out, "hello-from-edge") {
			t.Fatalf("kubectl exec through the tunnel: %v %s", err, out)
		}
	})

	t.Run("port-forward", func(t *testing.T) { framework.CheckPortForward(t, kc, "edge", framework.Member(t, "member3")) })
}
