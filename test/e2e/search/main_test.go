// Package search is the e2e suite of search: the multi-cluster cache behind
// search.karmada.io's search/cache, proxying/{name}/proxy and search/fulltext,
// against real member API servers.
package search

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

const (
	searchPrefix   = "/apis/search.karmada.io/v1alpha1/search/"
	proxyingPrefix = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
)

func TestMain(m *testing.M) {
	framework.Main(m, "search", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			// Short periods so the NotReady test runs in seconds.
			"--cluster-status-update-frequency=2s", "--cluster-failure-threshold=4s",
		}},
	}, "member1", "member2")
}

func adminConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func karmada(t *testing.T) versioned.Interface {
	t.Helper()
	return versioned.NewForConfigOrDie(adminConfig(t))
}

func member(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	cs, err := framework.Member(t, name).Client()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// through returns cfg with its server moved to the proxying endpoint.
func through(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Host += proxyingPrefix
	return out
}

// raw GETs an absolute path; errors carry the server's Status.
func raw(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	return kubernetes.NewForConfigOrDie(cfg).CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
}

// kubectlAs runs the kubectl built by make tools with a kubeconfig.
func kubectlAs(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(framework.Env.Options.BinDir, "kubectl"),
		append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + t.TempDir()}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// kubeconfigFor writes a kubeconfig whose server is cfg's host (plus
// suffix) with cfg's credentials.
func kubeconfigFor(t *testing.T, cfg *rest.Config, suffix string) string {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString
	user := fmt.Sprintf("{token: %q}", cfg.BearerToken)
	if cfg.BearerToken == "" {
		user = fmt.Sprintf("{client-certificate-data: %q, client-key-data: %q}", b64(cfg.CertData), b64(cfg.KeyData))
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority-data: %q}}]
users: [{name: u, user: %s}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, cfg.Host+suffix, b64(cfg.CAData), user)
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitRegistryReady waits until a ResourceRegistry reports its cache Ready
// and returns the condition.
func waitRegistryReady(t *testing.T, name string) metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	err := wait.PollUntilContextTimeout(t.Context(), 300*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		r, err := karmada(t).SearchV1alpha1().ResourceRegistries().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cond = meta.FindStatusCondition(r.Status.Conditions, "Ready")
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == r.Generation, nil
	})
	if err != nil {
		t.Fatalf("registry %s not Ready: %+v", name, cond)
	}
	return *cond
}

// metaOf is "cluster/name" of a watched object.
func metaOf(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return m.GetAnnotations()[searchv1alpha1.CachedFromClusterAnnotation] + "/" + m.GetName(), nil
}
