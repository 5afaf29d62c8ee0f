package propagation

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// karmada is a client of flotilla-apiserver's APIs through the host.
func karmada(t *testing.T) versioned.Interface {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return versioned.NewForConfigOrDie(cfg)
}

// host is a client of the host API server.
func host(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := framework.Env.Host.Client()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// member is a client of a member cluster.
func member(t *testing.T, name string) kubernetes.Interface {
	t.Helper()
	cs, err := framework.Env.Member(name).Client()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// kubectl runs kubectl against the host.
func kubectl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return framework.Kubectl(t, args...)
}

func kubectlAt(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	return framework.KubectlAt(t, kubeconfig, args...)
}

func commandContext(t *testing.T) (context.Context, context.CancelFunc) {
	return framework.CommandContext(t)
}

// apply applies a manifest given as text to the host.
func apply(t *testing.T, manifest string) {
	t.Helper()
	framework.Apply(t, manifest)
}

// eventually is framework.Eventually.
func eventually(t *testing.T, timeout time.Duration, cond func(ctx context.Context) string) {
	t.Helper()
	framework.Eventually(t, timeout, cond)
}

// bindingState describes the ResourceBinding of a Deployment: where the
// scheduler placed it and its conditions, for failure messages.
func bindingState(ctx context.Context, t *testing.T, ns, deploy string) string {
	rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, deploy+"-deployment", metav1.GetOptions{})
	if err != nil {
		return "binding: " + err.Error()
	}
	var conds []string
	for _, c := range rb.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
	}
	var summaries []string
	if clusters, err := karmada(t).ClusterV1alpha1().Clusters().List(ctx, metav1.ListOptions{}); err == nil {
		for _, c := range clusters.Items {
			if s := c.Status.ResourceSummary; s != nil {
				summaries = append(summaries, fmt.Sprintf("%s allocatable %v allocated %v allocating %v", c.Name, s.Allocatable, s.Allocated, s.Allocating))
			}
		}
	}
	return fmt.Sprintf("binding: clusters %v, conditions %v; clusters: %v", rb.Spec.Clusters, conds, summaries)
}

// memberReplicas returns "name: replicas/ready" of a Deployment in each
// member, "-" when absent.
func memberDeployments(ctx context.Context, t *testing.T, ns, name string, members ...string) map[string]string {
	out := map[string]string{}
	for _, m := range members {
		d, err := member(t, m).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			out[m] = "-"
		case err != nil:
			out[m] = "error: " + err.Error()
		default:
			out[m] = fmt.Sprintf("%d/%d", *d.Spec.Replicas, d.Status.ReadyReplicas)
		}
	}
	return out
}

// wantDeployments waits until each member shows the given "replicas/ready"
// (or "-" for absent) for a Deployment.
func wantDeployments(t *testing.T, timeout time.Duration, ns, name string, want map[string]string) {
	t.Helper()
	var members []string
	for m := range want {
		members = append(members, m)
	}
	eventually(t, timeout, func(ctx context.Context) string {
		got := memberDeployments(ctx, t, ns, name, members...)
		for m, w := range want {
			if got[m] != w {
				return fmt.Sprintf("deployment %s/%s in members: got %v, want %v", ns, name, got, want)
			}
		}
		return ""
	})
}

// events returns the reasons of the host events about an object.
func eventReasons(ctx context.Context, t *testing.T, ns, kind, name string) []string {
	list, err := host(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name})
	if err != nil {
		return []string{err.Error()}
	}
	var reasons []string
	for _, e := range list.Items {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}

func containsAll(have []string, want ...string) string {
	joined := "," + strings.Join(have, ",") + ","
	var missing []string
	for _, w := range want {
		if !strings.Contains(joined, ","+w+",") {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("missing %v in %v", missing, have)
	}
	return ""
}

// namespace creates a namespace for one test (framework.Namespace).
func namespace(t *testing.T, name string) string {
	t.Helper()
	return framework.Namespace(t, name)
}

// deployment is a Deployment manifest; cpu is the request of its one
// container ("" for none).
func deployment(name, ns string, replicas int, cpu string) string {
	res := ""
	if cpu != "" {
		res = fmt.Sprintf(", resources: {requests: {cpu: %q}}", cpu)
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx:1.7.9%[4]s}]}
`, name, ns, replicas, res)
}

// policy is a PropagationPolicy manifest selecting Deployment name (all
// Deployments when name is "") with the given placement YAML (indented by
// four spaces under spec.placement) and extra spec lines.
func policy(name, ns, deploy, placement, extra string) string {
	sel := "{apiVersion: apps/v1, kind: Deployment}"
	if deploy != "" {
		sel = fmt.Sprintf("{apiVersion: apps/v1, kind: Deployment, name: %s}", deploy)
	}
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: %s}
spec:
  resourceSelectors: [%s]
%s  placement:
%s`, name, ns, sel, extra, placement)
}

// replicasIn returns, per member, the spec.replicas of a Deployment or -1.
func replicasIn(ctx context.Context, t *testing.T, ns, name string, members ...string) map[string]int32 {
	out := map[string]int32{}
	for _, m := range members {
		d, err := member(t, m).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			out[m] = -1
			continue
		}
		out[m] = *d.Spec.Replicas
	}
	return out
}

// wantReplicas waits until the members hold the Deployment with these
// spec.replicas (-1: absent).
func wantReplicas(t *testing.T, timeout time.Duration, ns, name string, want map[string]int32) {
	t.Helper()
	var members []string
	for m := range want {
		members = append(members, m)
	}
	eventually(t, timeout, func(ctx context.Context) string {
		got := replicasIn(ctx, t, ns, name, members...)
		for m, w := range want {
			if got[m] != w {
				return fmt.Sprintf("replicas of %s/%s: got %v, want %v; %s", ns, name, got, want, bindingState(ctx, t, ns, name))
			}
		}
		return ""
	})
}

// flotillactl runs flotillactl against the control plane.
func flotillactl(t *testing.T, args ...string) (string, error) {
	t.Helper()
	e := framework.Env
	ctx, cancel := commandContext(t)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(e.Options.BinDir, "flotillactl"),
		append(args, "--kubeconfig="+e.Host.Kubeconfig)...).CombinedOutput()
	return string(out), err
}

// bothHealthy says what is missing until the binding ns/name reports both
// member clusters Healthy ("" once it does).
func bothHealthy(ctx context.Context, t *testing.T, ns, name string) string {
	rb, err := karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	healthy := 0
	for _, it := range rb.Status.AggregatedStatus {
		if it.Health == workv1alpha2.ResourceHealthy {
			healthy++
		}
	}
	if healthy != 2 {
		return fmt.Sprintf("aggregated status %+v, want both clusters Healthy", rb.Status.AggregatedStatus)
	}
	return ""
}

// templates is a client of gvr's resource templates in ns, through the host.
func templates(t *testing.T, gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	t.Helper()
	hc, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return dynamic.NewForConfigOrDie(hc).Resource(gvr).Namespace(ns)
}
