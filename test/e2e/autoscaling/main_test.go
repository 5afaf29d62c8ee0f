// Package autoscaling is the e2e suite of autoscaling: metrics.k8s.io
// served by the control plane from every member's metrics-server,
// FederatedHPA and CronFederatedHPA scaling a Deployment divided over real
// members whose pods' CPU use kwok emulates from pod annotations.
package autoscaling

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "autoscaling", env.Options{
		Members:           []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		MetricsResolution: env.MinMetricsResolution,
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--horizontal-pod-autoscaler-sync-period=5s",
			// A member's metrics that miss the deadline count as missing,
			// which holds a scale-down (upstream's rule): on a loaded
			// two-core machine a member can take more than the default 3s.
			"--metrics-member-timeout=10s",
			// Short periods so a stopped member is noticed in seconds.
			"--cluster-status-update-frequency=2s", "--cluster-failure-threshold=6s",
		}},
	}, "member1", "member2")
}

var members = []string{"member1", "member2"}

func karmada(t *testing.T) versioned.Interface           { return framework.Karmada(t) }
func host(t *testing.T) kubernetes.Interface             { return framework.HostClient(t) }
func member(t *testing.T, n string) kubernetes.Interface { return framework.MemberClient(t, n) }

// controlPlaneMetrics is a metrics.k8s.io client of the control plane.
func controlPlaneMetrics(t *testing.T) metricsclient.Interface {
	t.Helper()
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return metricsclient.NewForConfigOrDie(cfg)
}

// nginx is the workload of samples/autoscaling.yaml: a Deployment whose
// pods request 25m CPU and use what cpu says (kwok's usage annotation), a
// Service, and a policy dividing it 1:1 over both members.
func nginx(ns string, replicas int, cpu string) string {
	return nginxAnnotated(ns, replicas, "kwok.x-k8s.io/usage-cpu", cpu)
}

// nginxAnnotated is nginx whose pod template carries one annotation (an
// emulated metric).
func nginxAnnotated(ns string, replicas int, annotation, value string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: nginx, namespace: %[1]s, labels: {app: nginx}}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: nginx}}
  template:
    metadata:
      labels: {app: nginx}
      annotations: {%[4]s: %[3]q}
    spec: {containers: [{name: nginx, image: nginx:1.7.9, resources: {requests: {cpu: 25m}}}]}
---
apiVersion: v1
kind: Service
metadata: {name: nginx, namespace: %[1]s}
spec: {selector: {app: nginx}, ports: [{port: 80}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx, namespace: %[1]s}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: nginx}
    - {apiVersion: v1, kind: Service, name: nginx}
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
          - {targetCluster: {clusterNames: [member1]}, weight: 1}
          - {targetCluster: {clusterNames: [member2]}, weight: 1}
`, ns, replicas, value, annotation)
}

// setUsage changes the emulated CPU use of the template's pods (a rollout).
func setUsage(t *testing.T, ns, cpu string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kwok.x-k8s.io/usage-cpu":%q}}}}}`, cpu)
	if out, err := framework.Kubectl(t, "-n", ns, "patch", "deployment", "nginx", "--type=merge", "-p", patch); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// runningPods returns, per member, the names of the Running pods of app=nginx.
func runningPods(ctx context.Context, t *testing.T, ns string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, m := range members {
		pods, err := member(t, m).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == "Running" && p.DeletionTimestamp == nil {
				out[m] = append(out[m], p.Name)
			}
		}
	}
	return out, nil
}

// eventMessages returns "reason: message" of the host events about an object.
func eventMessages(ctx context.Context, t *testing.T, ns, kind, name string) []string {
	list, err := host(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name})
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason+": "+e.Message)
	}
	return out
}

func containsLine(lines []string, substr ...string) bool {
	for _, l := range lines {
		all := true
		for _, s := range substr {
			all = all && strings.Contains(l, s)
		}
		if all {
			return true
		}
	}
	return false
}

// podsAndSamples describes, for a failure message, the app=nginx pods of
// every member (phase, Ready, being deleted, start) and the samples the
// control plane's metrics.k8s.io serves for them: what a FederatedHPA
// computes from.
func podsAndSamples(ctx context.Context, t *testing.T, ns string) string {
	var b strings.Builder
	for _, m := range members {
		pods, err := member(t, m).CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
		if err != nil {
			fmt.Fprintf(&b, "%s pods: %v; ", m, err)
			continue
		}
		for _, p := range pods.Items {
			ready := "?"
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" {
					ready = string(c.Status) + "@" + c.LastTransitionTime.UTC().Format("15:04:05")
				}
			}
			start := "-"
			if p.Status.StartTime != nil {
				start = p.Status.StartTime.UTC().Format("15:04:05")
			}
			fmt.Fprintf(&b, "%s/%s %s ready=%s start=%s deleting=%t usage=%s; ", m, p.Name, p.Status.Phase, ready, start,
				p.DeletionTimestamp != nil, p.Annotations["kwok.x-k8s.io/usage-cpu"])
		}
	}
	list, err := controlPlaneMetrics(t).MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=nginx"})
	if err != nil {
		return b.String() + "samples: " + err.Error()
	}
	b.WriteString("samples:")
	for _, pm := range list.Items {
		var cpu []string
		for _, c := range pm.Containers {
			cpu = append(cpu, c.Usage.Cpu().String())
		}
		fmt.Fprintf(&b, " %s %v at %s/%s;", pm.Name, cpu, pm.Timestamp.UTC().Format("15:04:05"), pm.Window.Duration)
	}
	return b.String()
}
