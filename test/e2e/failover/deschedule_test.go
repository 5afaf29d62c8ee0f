package failover

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/descheduler"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// dynamicReplicas is the replicas of dynamicDivided's Deployment.
const dynamicReplicas = 6

// dynamicDivided is a Deployment of dynamicReplicas replicas and a policy
// dividing them over member1 and member2 by their available replicas.
func dynamicDivided(ns string) string {
	return web(ns, dynamicReplicas) + `spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`
}

// replicasIn is what b assigns to cluster (-1: not listed).
func replicasIn(b *workv1alpha2.ResourceBinding, cluster string) int32 {
	for _, c := range b.Spec.Clusters {
		if c.Name == cluster {
			return c.Replicas
		}
	}
	return -1
}

// taintMember1Nodes has member1's kube-scheduler place no new pod (a
// NoSchedule taint on its nodes: what runs stays) until the test ends.
func taintMember1Nodes(t *testing.T, key string) {
	t.Helper()
	kubeconfig := framework.Member(t, "member1").Kubeconfig
	if out, err := framework.KubectlAt(t, kubeconfig, "taint", "nodes", "--all", key+"=:NoSchedule"); err != nil {
		t.Fatalf("tainting member1's nodes: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := framework.KubectlAt(t, kubeconfig, "taint", "nodes", "--all", key+":NoSchedule-"); err != nil {
			t.Errorf("untainting member1's nodes: %v\n%s", err, out)
		}
	})
}

// member1Floor watches the binding from resourceVersion rv and keeps the
// fewest replicas any version of it assigned member1 (-1: a version left
// member1 out).
type member1Floor struct {
	mu       sync.Mutex
	min      int32
	versions int
	err      error
}

func watchMember1(t *testing.T, ns string, b *workv1alpha2.ResourceBinding) *member1Floor {
	t.Helper()
	f := &member1Floor{min: replicasIn(b, "member1")}
	ctx, cancel := context.WithCancel(t.Context())
	w, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + b.Name, ResourceVersion: b.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			f.mu.Lock()
			switch ev.Type {
			case watch.Added, watch.Modified:
				if rb, ok := ev.Object.(*workv1alpha2.ResourceBinding); ok {
					f.versions++
					f.min = min(f.min, replicasIn(rb, "member1"))
				}
			case watch.Error:
				f.err = fmt.Errorf("watch error: %v", ev.Object)
			}
			f.mu.Unlock()
		}
		f.mu.Lock()
		if ctx.Err() == nil && f.err == nil {
			f.err = fmt.Errorf("the watch of the binding ended early")
		}
		f.mu.Unlock()
	}()
	return f
}

// TestDeschedulerMovesUnschedulableReplicas: a
// Deployment divided by available replicas over member1 and member2;
// member1's nodes then take no new pod, and all but one of its replicas
// are deleted, so their replacements stay Pending (Unschedulable) there.
// After --unschedulable-threshold the descheduler takes exactly those
// replicas off member1 (DescheduleBindingSucceed on the binding and the
// template), never going below the replica Ready there, and the
// scheduler's scale-up places them in member2: every replica Ready again.
func TestDeschedulerMovesUnschedulableReplicas(t *testing.T) {
	ns := framework.Namespace(t, "fo-deschedule")
	// The replicas are divided once, by what each member can run then: an
	// earlier test may have stopped or tainted a member, so wait until
	// both are Ready, untainted and with every node Ready.
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		if err := framework.WaitClusterHealthy(ctx, "member1", "member2"); err != nil {
			return err.Error()
		}
		for _, m := range []string{"member1", "member2"} {
			c, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, m, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			if len(c.Spec.Taints) > 0 {
				return fmt.Sprintf("%s has taints %v", m, c.Spec.Taints)
			}
			if n := c.Status.NodeSummary; n == nil || n.TotalNum == 0 || n.ReadyNum != n.TotalNum {
				return fmt.Sprintf("%s's nodes: %+v", m, n)
			}
		}
		return ""
	})
	framework.Apply(t, dynamicDivided(ns))

	// Pods may take a minute to be Ready in a member an earlier test
	// stopped (its kwok reconnects with back-off).
	var b *workv1alpha2.ResourceBinding
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		var err error
		if b, err = binding(ctx, t, ns); err != nil {
			return err.Error()
		}
		m1, m2 := replicasIn(b, "member1"), replicasIn(b, "member2")
		if m1+m2 != dynamicReplicas || len(b.Spec.Clusters) != 2 {
			return "scheduled to " + clustersOf(b)
		}
		if msg := readyIn(ctx, t, "member1", ns, m1); msg != "" {
			return msg
		}
		return readyIn(ctx, t, "member2", ns, m2)
	})
	m1, m2 := replicasIn(b, "member1"), replicasIn(b, "member2")
	if m1 < 2 {
		t.Fatalf("member1 got %d of %d replicas (%s); the test needs 2 or more there", m1, dynamicReplicas, clustersOf(b))
	}

	taintMember1Nodes(t, "fo-deschedule")
	floor := watchMember1(t, ns, b)
	member1 := framework.MemberClient(t, "member1")
	pods, err := member1.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	// One Ready replica stays: the descheduler must never take it off.
	deleted := 0
	for _, p := range pods.Items {
		if deleted == int(m1)-1 {
			break
		}
		if err := member1.CoreV1().Pods(ns).Delete(t.Context(), p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		deleted++
	}
	if deleted != int(m1)-1 {
		t.Fatalf("deleted %d of member1's %d pods, want %d", deleted, len(pods.Items), m1-1)
	}
	// Their replacements are found unschedulable.
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		pods, err := member1.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err.Error()
		}
		n := 0
		for _, p := range pods.Items {
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
					n++
				}
			}
		}
		if n != deleted {
			return fmt.Sprintf("%d of member1's pods unschedulable, want %d", n, deleted)
		}
		return ""
	})

	// member1 keeps its Ready replica, member2 runs the rest.
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if want := fmt.Sprintf("member1:1 member2:%d", m2+m1-1); clustersOf(b) != want {
			return fmt.Sprintf("scheduled to %s, want %s", clustersOf(b), want)
		}
		if msg := readyIn(ctx, t, "member1", ns, 1); msg != "" {
			return msg
		}
		if msg := readyIn(ctx, t, "member2", ns, m2+m1-1); msg != "" {
			return msg
		}
		d, err := framework.HostClient(t).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Status.ReadyReplicas != dynamicReplicas {
			return fmt.Sprintf("the template has %d Ready replicas, want %d", d.Status.ReadyReplicas, dynamicReplicas)
		}
		return ""
	})
	// The descheduler may run between the two replacements turning
	// unschedulable: it then takes them off in two passes, each with
	// Karmada's message. Together they took m1-1 replicas off member1.
	wantDescheduled(t, ns, "web-deployment", "member1", m1-1)
	wantDescheduled(t, ns, "web", "member1", m1-1)

	floor.mu.Lock()
	defer floor.mu.Unlock()
	if floor.err != nil {
		t.Error(floor.err)
	}
	if floor.min != 1 || floor.versions == 0 {
		t.Errorf("member1 went down to %d replicas (-1: left out) over %d versions of the binding; want 1, its Ready replica", floor.min, floor.versions)
	}
	if out, err := framework.Kubectl(t, "get", "events", "-n", ns, "--field-selector", "reason="+descheduler.EventReasonDescheduleBindingFailed, "-o", "name"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("DescheduleBindingFailed events: %q (%v)", out, err)
	}
}

// descheduledIn matches the part of Karmada's DescheduleBindingSucceed
// message naming what left one cluster.
var descheduledIn = regexp.MustCompile(`(\d+) replica\(s\) in cluster\(([^)]+)\)`)

// wantDescheduled waits until the DescheduleBindingSucceed events on the
// object name (Karmada's "Binding has been descheduled, <n> total
// descheduled replica(s), <n> replica(s) in cluster(<cluster>)") add up to
// want replicas taken off cluster.
func wantDescheduled(t *testing.T, ns, name, cluster string, want int32) {
	t.Helper()
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		evs, err := framework.HostClient(t).CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err.Error()
		}
		var got int32
		var seen []string
		for _, e := range evs.Items {
			seen = append(seen, e.Reason+": "+e.Message)
			if e.Reason != descheduler.EventReasonDescheduleBindingSucceed || !strings.HasPrefix(e.Message, "Binding has been descheduled, ") {
				continue
			}
			for _, m := range descheduledIn.FindAllStringSubmatch(e.Message, -1) {
				if m[2] == cluster {
					n, _ := strconv.Atoi(m[1])
					got += int32(n) * max(e.Count, 1)
				}
			}
		}
		if got != want {
			return fmt.Sprintf("%s events on %s take %d replica(s) off %s, want %d; events: %v", descheduler.EventReasonDescheduleBindingSucceed, name, got, cluster, want, seen)
		}
		return ""
	})
}
