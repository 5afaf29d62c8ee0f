package clusters

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// proxyKubeconfig writes a kubeconfig with the control plane's admin whose
// server is member1 through clusters/member1/proxy.
func proxyKubeconfig(t *testing.T) string {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: m1, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: admin, user: {client-certificate-data: %q, client-key-data: %q}}]
contexts: [{name: m1, context: {cluster: m1, user: admin}}]
current-context: m1
`, cfg.Host+proxyPrefix+"member1/proxy", b64(cfg.CAData), b64(cfg.CertData), b64(cfg.KeyData))
	return writeFile(t, "admin-proxy.kubeconfig", []byte(kc))
}

// TestProxyStreams: logs, logs -f, exec and port-forward stream through the
// proxy. kwok serves every pod's log from a file, runs exec locally and
// forwards ports to a listener this test starts.
func TestProxyStreams(t *testing.T) {
	ctx := t.Context()
	m := framework.Member(t, "member1")
	cs, err := m.Client()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "streams", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, "streams", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod not running: %v", err)
	}
	kc := proxyKubeconfig(t)
	// The admin reaches member1 once unified auth granted the group system:masters.
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := kubectlAs(t, kc, "get", "pod", "streams")
		return err == nil, nil
	})
	if err != nil {
		out, _ := kubectlAs(t, kc, "get", "pod", "streams")
		t.Fatalf("admin cannot reach member1 through the proxy: %s", out)
	}

	t.Run("logs", func(t *testing.T) {
		out, err := kubectlAs(t, kc, "logs", "streams")
		if err != nil || !strings.Contains(out, "kwok pod log") {
			t.Fatalf("kubectl logs: %v %s", err, out)
		}
	})

	t.Run("logs -f", func(t *testing.T) { framework.CheckLogsFollow(t, kc, "streams", m) })

	t.Run("exec", func(t *testing.T) {
		out, err := kubectlAs(t, kc, "exec", "streams", "--", "echo", "hello-from-exec")
		if err != nil || !strings.Contains(out, "hello-from-exec") {
			t.Fatalf("kubectl exec: %v %s", err, out)
		}
	})

	t.Run("port-forward", func(t *testing.T) { framework.CheckPortForward(t, kc, "streams", m) })
}
