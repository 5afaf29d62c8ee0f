package clusters

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

const proxyPrefix = "/apis/cluster.karmada.io/v1alpha1/clusters/"

// tomConfig creates the service account tom on the control plane, allowed to
// proxy to member1 only, and returns a client configuration with its token.
func tomConfig(t *testing.T) *rest.Config {
	t.Helper()
	return framework.ProxyServiceAccountConfig(t, "tom", "member1")
}

func raw(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	// The core client decodes Status bodies, so errors carry the member's message.
	return kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
}

// TestProxyPerUserAccess: per-user access through clusters/{name}/proxy.
// Host RBAC decides which cluster, member RBAC decides what there, and the
// member sees tom.
func TestProxyPerUserAccess(t *testing.T) {
	ctx := t.Context()
	tom := tomConfig(t)

	// Discovery on member1 works once unified auth let the impersonator act as tom.
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, lastErr = raw(ctx, tom, proxyPrefix+"member1/proxy/apis")
		return lastErr == nil, nil
	})
	if err != nil {
		t.Fatalf("tom cannot reach member1's /apis through the proxy: %v", lastErr)
	}

	// No member RBAC yet: member1 itself refuses, naming tom (the body is
	// the member's Status).
	body, err := raw(ctx, tom, proxyPrefix+"member1/proxy/api/v1/nodes")
	if !apierrors.IsForbidden(err) || !strings.Contains(string(body), `User \"system:serviceaccount:default:tom\" cannot list resource \"nodes\"`) {
		t.Fatalf("nodes without member RBAC: got %v %s, want the member's Forbidden naming system:serviceaccount:default:tom", err, body)
	}

	// Host RBAC refuses member2 before any member is asked.
	body, err = raw(ctx, tom, proxyPrefix+"member2/proxy/api/v1/nodes")
	if !apierrors.IsForbidden(err) || !strings.Contains(string(body), `resource \"clusters/proxy\" in API group \"cluster.karmada.io\"`) {
		t.Fatalf("member2: got %v %s, want Forbidden from the control plane on clusters/proxy", err, body)
	}

	// member1 grants tom node reading: now the list comes back.
	m1, err := framework.Member(t, "member1").Client()
	if err != nil {
		t.Fatal(err)
	}
	_, err = m1.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "node-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes", "configmaps"}, Verbs: []string{"get", "list", "watch"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m1.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tom-node-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "node-reader"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "tom"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var nodes corev1.NodeList
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		body, err := raw(ctx, tom, proxyPrefix+"member1/proxy/api/v1/nodes")
		lastErr = err
		return err == nil && json.Unmarshal(body, &nodes) == nil, nil
	})
	if err != nil {
		t.Fatalf("tom cannot list member1's nodes after the member bound a role: %v", lastErr)
	}
	if len(nodes.Items) != 2 {
		t.Errorf("listed %d nodes through the proxy, want member1's 2", len(nodes.Items))
	}

	t.Run("watch streams", func(t *testing.T) { testProxyWatch(t, tom, m1) })
	t.Run("kubeconfig pointing at the proxy", func(t *testing.T) { testProxyKubeconfig(t, tom) })
}

// A watch through the proxy delivers events as they happen.
func testProxyWatch(t *testing.T, tom *rest.Config, m1 kubernetes.Interface) {
	cfg := rest.CopyConfig(tom)
	cfg.Host += proxyPrefix + "member1/proxy"
	framework.CheckWatchStreams(t, kubernetes.NewForConfigOrDie(cfg), m1)
}

// A kubeconfig whose server ends in .../clusters/member1/proxy makes plain
// kubectl talk to member1.
func testProxyKubeconfig(t *testing.T, tom *rest.Config) {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: member1, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: tom, user: {token: %q}}]
contexts: [{name: member1, context: {cluster: member1, user: tom}}]
current-context: member1
`, tom.Host+proxyPrefix+"member1/proxy", base64.StdEncoding.EncodeToString(tom.CAData), tom.BearerToken)
	path := writeFile(t, "tom.kubeconfig", []byte(kc))
	out, err := kubectlAs(t, path, "get", "nodes", "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get nodes through the proxy: %v: %s", err, out)
	}
	if got := strings.Count(out, "node/"); got != 2 {
		t.Errorf("kubectl listed %d nodes, want 2:\n%s", got, out)
	}
}
