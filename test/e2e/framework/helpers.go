package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/env"
)

// Kubectl runs kubectl against the control plane and returns its combined
// output.
func Kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return KubectlAt(t, Env.Host.Kubeconfig, args...)
}

// KubectlAt runs kubectl with a kubeconfig.
func KubectlAt(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := CommandContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(Env.Options.BinDir, "kubectl"),
		append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + t.TempDir()}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Flotillactl runs flotillactl as the control plane's admin, located by
// KUBECONFIG as a user's shell does, and returns its stdout; on failure
// the error carries stderr.
func Flotillactl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := CommandContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(Env.Options.BinDir, "flotillactl"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "KUBECONFIG="+Env.Host.Kubeconfig, "KUBECACHEDIR="+t.TempDir())
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("flotillactl %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// CommandContext bounds a command of the test. It outlives t.Context(),
// which ends before cleanups run, so cleanups can run commands too.
func CommandContext(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(t.Context()), 2*time.Minute)
}

// Apply applies a manifest given as text to the control plane.
func Apply(t *testing.T, manifest string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(f, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := Kubectl(t, "apply", "-f", f); err != nil {
		t.Fatalf("kubectl apply: %v\n%s\n%s", err, out, manifest)
	}
}

// Eventually polls cond every 250ms until it returns "" or timeout passes,
// then fails with cond's last complaint.
func Eventually(t *testing.T, timeout time.Duration, cond func(ctx context.Context) string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == "", nil
	})
	if err != nil {
		// The last try may have been cut by the deadline: ask once more
		// with time to answer, so the message says what is wrong.
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if last = cond(ctx); last == "" {
			return
		}
		t.Fatalf("after %s: %s", timeout, last)
	}
}

// Namespace creates a namespace on the control plane for one test and
// deletes it afterwards; auto-propagation brings it to the members.
func Namespace(t *testing.T, name string) string {
	t.Helper()
	if out, err := Kubectl(t, "create", "namespace", name); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		host, err := Env.Host.Client()
		if err == nil {
			_ = host.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
		}
	})
	return name
}

// Karmada is a client of flotilla-apiserver's APIs through the host.
func Karmada(t *testing.T) versioned.Interface {
	t.Helper()
	cfg, err := Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return versioned.NewForConfigOrDie(cfg)
}

// HostClient is a client of the host API server (the control plane).
func HostClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// MemberClient is a client of a member cluster.
func MemberClient(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	cs, err := Member(t, name).Client()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// WaitPodsAdmitted waits until a member's namespace can take pods: the
// member's ServiceAccount admission refuses them until its controller
// manager has made the namespace's "default" account.
func WaitPodsAdmitted(t *testing.T, member, ns string) {
	t.Helper()
	cs := MemberClient(t, member)
	Eventually(t, time.Minute, func(ctx context.Context) string {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return "the default ServiceAccount of " + ns + " in " + member + ": " + err.Error()
		}
		return ""
	})
}

// FlotillaConfig is the host's client configuration pointed at
// flotilla-apiserver itself, past the host aggregator (its /metrics and
// /debug/pprof); its serving certificate is self-signed.
func FlotillaConfig(t *testing.T) *rest.Config {
	t.Helper()
	cfg, err := Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Host = "https://127.0.0.1:" + strconv.Itoa(Env.Host.Ports.Flotilla)
	cfg.CAData, cfg.CAFile, cfg.Insecure = nil, "", true
	return cfg
}

// ApplySample applies samples/<name> of the repository and deletes what it
// created when the test ends.
func ApplySample(t *testing.T, name string) {
	t.Helper()
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(root, "samples", name)
	if out, err := Kubectl(t, "apply", "-f", sample); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = Kubectl(t, "delete", "--ignore-not-found", "-f", sample) })
}
