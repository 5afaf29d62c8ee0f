package failover

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// notReadyNoExecute is a ClusterTaintPolicy tainting the named clusters
// NoExecute while they are not Ready.
func notReadyNoExecute(t *testing.T, name string, clusters ...string) {
	t.Helper()
	names := ""
	for i, c := range clusters {
		if i > 0 {
			names += ", "
		}
		names += c
	}
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: %s}
spec:
  targetClusters: {clusterNames: [%s]}
  addOnConditions: [{conditionType: Ready, operator: NotIn, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: %s, effect: NoExecute}]
`, name, names, name))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "clustertaintpolicy", name, "--ignore-not-found")
		for _, c := range clusters {
			_, _ = framework.Kubectl(t, "patch", "cluster", c, "--type=merge", "-p", `{"spec":{"taints":null}}`)
		}
	})
}

// generation reads the generation of web in member ("" when absent).
func generation(ctx context.Context, t *testing.T, member, ns string) (int64, error) {
	d, err := framework.MemberClient(t, member).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	return d.Generation, nil
}

// TestOutageWithoutNoExecuteKeepsEverything (safe defaults):
// member1's kube-apiserver stopped for 2 minutes, with no NoExecute
// ClusterTaintPolicy: member1 becomes NotReady (NoSchedule taints only),
// the binding keeps both clusters throughout, and once member1 is back
// nothing is deleted or rewritten in either member.
func TestOutageWithoutNoExecuteKeepsEverything(t *testing.T) {
	ns := framework.Namespace(t, "fo-outage")
	framework.Apply(t, divided(ns, ""))
	spread(t, ns)
	gens := generations(t, ns)

	restart := framework.StopMember(t, "member1")
	deadline := time.Now().Add(2 * time.Minute)
	sawNotReady := false
	for time.Now().Before(deadline) {
		b, err := binding(t.Context(), t, ns)
		if err != nil {
			t.Fatal(err)
		}
		if got := clustersOf(b); got != "member1:1 member2:1" || len(b.Spec.GracefulEvictionTasks) > 0 {
			t.Fatalf("during the outage: scheduled to %q, tasks %+v; want the placement kept", got, b.Spec.GracefulEvictionTasks)
		}
		c, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(t.Context(), "member1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !ready(c) {
			sawNotReady = true
		}
		time.Sleep(2 * time.Second)
	}
	if !sawNotReady {
		t.Fatal("member1 never became NotReady while stopped")
	}
	if err := restart(); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		if err := framework.WaitClusterHealthy(ctx, "member1"); err != nil {
			return err.Error()
		}
		return ""
	})
	// Give the execution controller time to act on member1 again.
	time.Sleep(10 * time.Second)
	keptGenerations(t, ns, gens)
}

// TestNotReadyNoExecuteFailsOver: a ClusterTaintPolicy taints
// member1 NoExecute while it is not Ready; member1's kube-apiserver stops,
// and its replica moves to member2. The graceful eviction task ends only
// once member2 runs both replicas (not when it is healthy with the one it
// had). When member1 is back, the old Deployment there is removed (the
// scheduler may place a replica on member1 again once its taint is gone:
// that is a new Deployment).
func TestNotReadyNoExecuteFailsOver(t *testing.T) {
	ns := framework.Namespace(t, "fo-notready")
	framework.Apply(t, divided(ns, ""))
	spread(t, ns)
	old, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	notReadyNoExecute(t, "fo-notready", "member1")

	restart := framework.StopMember(t, "member1")
	taskEndsWhenReady(t, ns, "member2", 2, 2*time.Minute)
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if got := clustersOf(b); got != "member2:2" {
			return "scheduled to " + got
		}
		return readyIn(ctx, t, "member2", ns, 2)
	})
	wantEvent(t, ns, "web-deployment", "EvictWorkloadFromClusterSucceed", "Evict from cluster member1 succeed.")
	wantEvent(t, ns, "web", "EvictWorkloadFromClusterSucceed", "Evict from cluster member1 succeed.")
	wantEvent(t, ns, "web-deployment", "GracefulEvictionCompleted", "Removed the workload from cluster member1: the workload is healthy in member2.")
	if err := restart(); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		d, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return ""
		} else if err != nil {
			return err.Error()
		}
		if d.UID == old.UID {
			return "the old Deployment (uid " + string(old.UID) + ") is still in member1"
		}
		return ""
	})
}

// taskEndsWhenReady waits for the binding of web to have a graceful
// eviction task and then none, and checks that, when it ended, member ran
// web with want replicas, all Ready: the old cluster's Work went only
// after the replacement was healthy.
func taskEndsWhenReady(t *testing.T, ns, member string, want int32, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	sawTask := false
	for {
		b, err := binding(t.Context(), t, ns)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Spec.GracefulEvictionTasks) > 0 {
			sawTask = true
		} else if sawTask {
			if msg := readyIn(t.Context(), t, member, ns, want); msg != "" {
				t.Fatalf("the graceful eviction task ended before the replacement was ready: %s", msg)
			}
			return
		}
		if time.Now().After(deadline) {
			// What the graceful eviction controller weighs, to tell why
			// the task stayed.
			status, _ := json.MarshalIndent(b.Status, "", "  ")
			works, _ := framework.Karmada(t).WorkV1alpha1().Works("").List(t.Context(), metav1.ListOptions{})
			var ws []string
			for _, w := range works.Items {
				if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotationKey] == ns {
					st, _ := json.Marshal(w.Status)
					ws = append(ws, fmt.Sprintf("%s/%s gen %d: %s", w.Namespace, w.Name, w.Generation, st))
				}
			}
			t.Fatalf("after %s: tasks %+v (seen one: %v), scheduled to %s; binding generation %d, status %s; %s: %s; works:\n%s",
				within, b.Spec.GracefulEvictionTasks, sawTask, clustersOf(b), b.Generation, status,
				member, readyIn(t.Context(), t, member, ns, want), strings.Join(ws, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAllMembersDownPausesEviction (safety valve): every member
// is not Ready at once (tainted NoExecute by a ClusterTaintPolicy): the
// taint manager takes it for a partition of the control plane, pauses
// with an EvictionPaused event, and nothing is evicted or deleted; when
// the members are back, both keep their replica.
func TestAllMembersDownPausesEviction(t *testing.T) {
	ns := framework.Namespace(t, "fo-partition")
	framework.Apply(t, divided(ns, ""))
	spread(t, ns)
	gens := generations(t, ns)
	notReadyNoExecute(t, "fo-partition", "member1", "member2")

	restart1 := framework.StopMember(t, "member1")
	restart2 := framework.StopMember(t, "member2")
	wantEvent(t, ns, "web-deployment", "EvictionPaused", "2 of 2 clusters are not Ready")
	b, err := binding(t.Context(), t, ns)
	if err != nil {
		t.Fatal(err)
	}
	if got := clustersOf(b); got != "member1:1 member2:1" || len(b.Spec.GracefulEvictionTasks) > 0 {
		t.Fatalf("while paused: scheduled to %q, tasks %+v; want the placement kept", got, b.Spec.GracefulEvictionTasks)
	}
	// The binding says why.
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.EvictionPaused)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1alpha2.EvictionPausedReasonClustersNotReady || !strings.Contains(c.Message, "2 of 2 clusters are not Ready") {
			return fmt.Sprintf("EvictionPaused condition %+v", c)
		}
		return ""
	})
	for _, restart := range []func() error{restart1, restart2} {
		if err := restart(); err != nil {
			t.Fatal(err)
		}
	}
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		if err := framework.WaitClusterHealthy(ctx, "member1", "member2"); err != nil {
			return err.Error()
		}
		return ""
	})
	time.Sleep(5 * time.Second)
	b, err = binding(t.Context(), t, ns)
	if err != nil {
		t.Fatal(err)
	}
	if got := clustersOf(b); got != "member1:1 member2:1" || len(b.Spec.GracefulEvictionTasks) > 0 {
		t.Errorf("after the members came back: scheduled to %q, tasks %+v; want the placement kept", got, b.Spec.GracefulEvictionTasks)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.EvictionPaused); c == nil || c.Status != metav1.ConditionFalse ||
			c.Reason != workv1alpha2.EvictionPausedReasonResumed {
			return fmt.Sprintf("after the members came back: EvictionPaused condition %+v, want False", c)
		}
		return ""
	})
	keptGenerations(t, ns, gens)
}

func ready(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// generations reads the generation of web in both members.
func generations(t *testing.T, ns string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, m := range []string{"member1", "member2"} {
		g, err := generation(t.Context(), t, m, ns)
		if err != nil {
			t.Fatal(err)
		}
		out[m] = g
	}
	return out
}

// keptGenerations fails for a member whose web was deleted or rewritten
// since generations read it.
func keptGenerations(t *testing.T, ns string, was map[string]int64) {
	t.Helper()
	for member, want := range was {
		g, err := generation(t.Context(), t, member, ns)
		if err != nil || g != want {
			t.Errorf("%s's Deployment: generation %d (%v), want %d: nothing rewritten or deleted", member, g, err, want)
		}
	}
}
