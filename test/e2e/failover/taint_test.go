package failover

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := framework.Kubectl(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// web is the Deployment web of replicas replicas in ns, one nginx
// container with small requests, followed by a PropagationPolicy of it,
// "---" and the policy's head ("spec:" comes next, from the caller).
func web(ns string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s, labels: {app: web}}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27, resources: {requests: {cpu: 10m, memory: 16Mi}}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
`, ns, replicas)
}

// divided is a Deployment of 2 replicas and a policy dividing it evenly
// over member1 and member2; extra is appended to the policy's spec.
func divided(ns, extra string) string {
	return web(ns, 2) + `spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}
` + extra
}

// taintMember1 puts a NoExecute taint on member1 and takes it off when
// the test ends.
func taintMember1(t *testing.T, key string) {
	t.Helper()
	kubectl(t, "patch", "cluster", "member1", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"effect":"NoExecute"}]}}`, key))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "patch", "cluster", "member1", "--type=merge", "-p", `{"spec":{"taints":null}}`)
	})
}

// binding reads the Deployment web's binding.
func binding(ctx context.Context, t *testing.T, ns string) (*workv1alpha2.ResourceBinding, error) {
	return framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
}

func clustersOf(b *workv1alpha2.ResourceBinding) string {
	var parts []string
	for _, c := range b.Spec.Clusters {
		parts = append(parts, fmt.Sprintf("%s:%d", c.Name, c.Replicas))
	}
	return strings.Join(parts, " ")
}

// readyIn tells "" when member's web Deployment has want ready replicas.
func readyIn(ctx context.Context, t *testing.T, member, ns string, want int32) string {
	d, err := framework.MemberClient(t, member).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("%s: %v", member, err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != want || d.Status.ReadyReplicas != want {
		return fmt.Sprintf("%s: replicas %d, ready %d; want %d", member, ptr.Deref(d.Spec.Replicas, 0), d.Status.ReadyReplicas, want)
	}
	return ""
}

func goneFrom(ctx context.Context, t *testing.T, member, ns string) string {
	_, err := framework.MemberClient(t, member).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ""
	}
	return fmt.Sprintf("web still in %s (%v)", member, err)
}

// spread waits until web is scheduled to both members, one replica
// each, and exists in both.
func spread(t *testing.T, ns string) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if got := clustersOf(b); got != "member1:1 member2:1" {
			return "scheduled to " + got
		}
		for _, m := range []string{"member1", "member2"} {
			if goneFrom(ctx, t, m, ns) == "" {
				return "web not yet in " + m
			}
		}
		return ""
	})
}

// TestNoExecuteTaintGracefulEviction: member1
// tainted NoExecute, untolerated → its binding leaves member1 with a
// GracefulEvictionTask, the scheduler moves its replica to member2, and
// once member2's replicas are healthy the task ends (its event says so)
// and member1's Deployment goes. The binding records
// EvictWorkloadFromClusterSucceed. (That member1 keeps its replica while
// member2's are not healthy: TestGracefulEvictionWaitsForHealth.)
func TestNoExecuteTaintGracefulEviction(t *testing.T) {
	ns := framework.Namespace(t, "fo-graceful")
	framework.Apply(t, divided(ns, ""))
	spread(t, ns)

	taintMember1(t, "fo-graceful")
	// Pods may take a minute to be Ready in a member an earlier test
	// stopped (its kwok reconnects with back-off).
	taskEndsWhenReady(t, ns, "member2", 2, 3*time.Minute)
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if got := clustersOf(b); got != "member2:2" {
			return "scheduled to " + got
		}
		if msg := readyIn(ctx, t, "member2", ns, 2); msg != "" {
			return msg
		}
		if len(b.Spec.GracefulEvictionTasks) > 0 {
			return "eviction task still open"
		}
		return goneFrom(ctx, t, "member1", ns)
	})
	// The task ended because the workload was healthy in member2.
	wantEvent(t, ns, "web-deployment", "GracefulEvictionCompleted", "Removed the workload from cluster member1: the workload is healthy in member2.")
	wantEvent(t, ns, "web-deployment", "EvictWorkloadFromClusterSucceed", "Evict from cluster member1 succeed.")
	// As in Karmada, the template records the eviction too: a runbook
	// waits for it on the Deployment.
	wantEvent(t, ns, "web", "EvictWorkloadFromClusterSucceed", "Evict from cluster member1 succeed.")
	if out := kubectl(t, "describe", "deployment", "web", "-n", ns); !strings.Contains(out, "EvictWorkloadFromClusterSucceed") ||
		!strings.Contains(out, "Evict from cluster member1 succeed.") {
		t.Errorf("kubectl describe deployment lacks the eviction event:\n%s", out)
	}
	// kubectl describe says why member1 was left and when its old
	// replicas went.
	out := kubectl(t, "describe", "rb", "web-deployment", "-n", ns)
	for _, want := range []string{"EvictWorkloadFromClusterSucceed", "GracefulEvictionCompleted", "Removed the workload from cluster member1: the workload is healthy in member2."} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe rb lacks %q:\n%s", want, out)
		}
	}
}

// TestNoExecuteTaintDirectly: with failover.cluster.purgeMode Directly the
// binding leaves member1 without a task, and member1's Deployment goes at
// once.
func TestNoExecuteTaintDirectly(t *testing.T) {
	ns := framework.Namespace(t, "fo-directly")
	framework.Apply(t, divided(ns, "  failover:\n    cluster: {purgeMode: Directly}\n"))
	spread(t, ns)

	taintMember1(t, "fo-directly")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if len(b.Spec.GracefulEvictionTasks) > 0 {
			t.Fatalf("tasks %+v with purge mode Directly, want none", b.Spec.GracefulEvictionTasks)
		}
		if got := clustersOf(b); got != "member2:2" {
			return "scheduled to " + got
		}
		return goneFrom(ctx, t, "member1", ns)
	})
	wantEvent(t, ns, "web-deployment", "EvictWorkloadFromClusterSucceed", "Evict from cluster member1 succeed.")
	wantEvent(t, ns, "web", "EvictWorkloadFromClusterSucceed", "Evict from cluster member1 succeed.")
}

// TestNoExecuteTaintTolerated: a policy that tolerates the taint keeps its
// placement, and nothing is rewritten in the members.
func TestNoExecuteTaintTolerated(t *testing.T) {
	ns := framework.Namespace(t, "fo-tolerated")
	framework.Apply(t, divided(ns, "    clusterTolerations: [{key: fo-tolerated, operator: Exists, effect: NoExecute}]\n"))
	spread(t, ns)
	d, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	taintMember1(t, "fo-tolerated")
	// Give the taint manager time to act, were it to.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := binding(t.Context(), t, ns)
		if err != nil {
			t.Fatal(err)
		}
		if got := clustersOf(b); got != "member1:1 member2:1" || len(b.Spec.GracefulEvictionTasks) > 0 {
			t.Fatalf("scheduled to %q with tasks %+v, want the placement kept", got, b.Spec.GracefulEvictionTasks)
		}
		time.Sleep(time.Second)
	}
	now, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if now.Generation != d.Generation {
		t.Errorf("member1's Deployment rewritten: generation %d, was %d", now.Generation, d.Generation)
	}
}

// wantEvent waits for an event of reason on the binding whose message
// contains msg.
func wantEvent(t *testing.T, ns, name, reason, msg string) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		evs, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err.Error()
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Reason == reason && strings.Contains(e.Message, msg) {
				return ""
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return fmt.Sprintf("no %s event containing %q on %s; events: %v", reason, msg, name, seen)
	})
}

// TestGracefulEvictionWaitsForHealth: the workload's
// image never becomes Ready (the test bed's fake registry), so after
// member1 is tainted its replacement in member2 is never healthy: the
// eviction task stays open and member1 keeps its Deployment, untouched,
// until the grace period ends (10 minutes, past the test).
func TestGracefulEvictionWaitsForHealth(t *testing.T) {
	ns := framework.Namespace(t, "fo-unhealthy")
	framework.Apply(t, strings.Replace(divided(ns, ""), "image: nginx:1.27", "image: "+env.FakeImageRegistry+"/nginx:1.27", 1))
	spread(t, ns)
	gen1, err := generation(t.Context(), t, "member1", ns)
	if err != nil {
		t.Fatal(err)
	}

	taintMember1(t, "fo-unhealthy")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if got := clustersOf(b); got != "member2:2" || len(b.Spec.GracefulEvictionTasks) != 1 {
			return fmt.Sprintf("scheduled to %s with %d tasks", got, len(b.Spec.GracefulEvictionTasks))
		}
		d, err := framework.MemberClient(t, "member2").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			return fmt.Sprintf("member2's web: %v", err)
		}
		return ""
	})
	// The replacement is not healthy: for 15 s the task stays and member1
	// keeps its Deployment as it was.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		b, err := binding(t.Context(), t, ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Spec.GracefulEvictionTasks) != 1 {
			t.Fatalf("tasks %+v while member2 is not healthy, want member1's to stay", b.Spec.GracefulEvictionTasks)
		}
		if g, err := generation(t.Context(), t, "member1", ns); err != nil || g != gen1 {
			t.Fatalf("member1's web: generation %d (%v), want it kept at %d while its replacement is not healthy", g, err, gen1)
		}
		time.Sleep(time.Second)
	}
	// Explainable: kubectl names the cluster being left,
	// why, and when its replicas go at the latest.
	if out := kubectl(t, "get", "rb", "web-deployment", "-n", ns, "-o", "wide"); !strings.Contains(out, "EVICTING") || !strings.Contains(out, "member1(TaintUntolerated)") {
		t.Errorf("kubectl get rb -o wide does not show the eviction from member1:\n%s", out)
	}
	out := kubectl(t, "describe", "rb", "web-deployment", "-n", ns)
	for _, want := range []string{"Graceful Eviction Tasks", "member1", "TaintUntolerated",
		"its replicas in member1 stay until it is healthy in the clusters it moves to, at most until", "EvictWorkloadFromClusterSucceed"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl describe rb lacks %q:\n%s", want, out)
		}
	}
}
