package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// memberCPUQuota puts a ResourceQuota of requests.cpu into a member's
// namespace and waits until the member's quota controller has counted its
// use (the estimator needs status.used).
func memberCPUQuota(t *testing.T, member, ns, cpu string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		_, err := framework.MemberClient(t, member).CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "sem-cpu", Namespace: ns},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsCPU: resource.MustParse(cpu)}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err.Error()
		}
		return ""
	})
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		q, err := framework.MemberClient(t, member).CoreV1().ResourceQuotas(ns).Get(ctx, "sem-cpu", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if _, ok := q.Status.Used[corev1.ResourceRequestsCPU]; !ok {
			return "quota status not computed yet"
		}
		return ""
	})
}

// requestedCPU is what the pods bound to a member's nodes request, in
// millicores.
func requestedCPU(t *testing.T, member string) int64 {
	t.Helper()
	pods, err := framework.MemberClient(t, member).CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var m int64
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Spec.Containers {
			m += c.Resources.Requests.Cpu().MilliValue()
		}
	}
	return m
}

// TestSchedulingWithoutOvercommit: workloads scheduled one after the other
// take the room the previous ones were assigned, although none of their
// pods exists (Karmada's scheduling overcommit protection). The workloads
// are FlinkDeployments, a kind whose pods never appear (nothing in the
// members runs them), of one job manager (500m) and two task managers of
// 10 CPUs: 20.5 CPUs a set. member1's two nodes of 32 CPUs take three
// sets, and their per-node room alone would take three more each time;
// member2, the second choice, takes one: its quota of 25 CPUs in the
// namespace runs one pair of task managers. The fourth workload goes to
// member2 (member1 counts the three sets assigned there as taken), the
// fifth nowhere (member2's quota counts the fourth as used) — and it stays
// so while the members show the workloads, which report neither health
// nor replicas.
func TestSchedulingWithoutOvercommit(t *testing.T) {
	framework.Apply(t, componentsKind)
	kubectl(t, "wait", "--for=condition=Established", "crd/flinkdeployments.sem.flotilla.io", "--timeout=30s")
	ns := framework.Namespace(t, "sem-overcommit")
	// The workloads go before the namespace (cleanups run last first), and
	// with them their bindings, so no other test finds their room taken.
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "flinkdeployments.sem.flotilla.io", "-n", ns, "--all", "--wait=true")
		// t.Context() has ended: cleanups poll on their own.
		err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			l, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 0, nil
		})
		if err != nil {
			t.Errorf("the bindings of %s did not go: %v", ns, err)
		}
		_, _ = framework.Kubectl(t, "delete", "resourceinterpretercustomization", "sem-flinkdeployment", "--ignore-not-found")
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "sem-flinkdeployments-crd", "--ignore-not-found")
	})
	deployed := map[string]dynamic.ResourceInterface{
		"member1": memberFlinkDeployments(t, "member1", ns),
		"member2": memberFlinkDeployments(t, "member2", ns),
	}
	if used := requestedCPU(t, "member1"); used > 2000 {
		t.Fatalf("member1's pods request %dm CPUs; the test counts on its nodes being nearly free (at most 2)", used)
	}
	memberCPUQuota(t, "member2", ns, "25")
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: flink, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: sem.flotilla.io/v1, kind: FlinkDeployment}]
  placement:
    clusterAffinities:
    - {affinityName: first, clusterNames: [member1]}
    - {affinityName: second, clusterNames: [member2]}
`, ns))

	const set = "{jobmanager:1 taskmanager:2}"
	for i, want := range []string{"member1" + set, "member1" + set, "member1" + set, "member2" + set, ""} {
		name := fmt.Sprintf("w%d", i+1)
		framework.Apply(t, flinkDeployment(ns, name, "10"))
		framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
			got, _, cond, err := componentsBinding(ctx, t, ns, name)
			if err != nil {
				return err.Error()
			}
			if want == "" {
				if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonUnschedulable ||
					!strings.Contains(cond.Message, "cannot host a whole set of the components") || got != "" {
					return fmt.Sprintf("%s: scheduled to %q, condition %+v; want Unschedulable, no cluster", name, got, cond)
				}
				return ""
			}
			if got != want || cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != workv1alpha2.BindingReasonSuccess {
				return fmt.Sprintf("%s: scheduled to %q (%+v), want %q", name, got, cond, want)
			}
			return ""
		})
	}
	waitEvent(t, ns, "FlinkDeployment", "w5", "ScheduleBindingFailed", "cannot host a whole set of the components")

	// The members run the workloads, and no pod of them.
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		for member, want := range map[string]int{"member1": 3, "member2": 1} {
			l, err := deployed[member].List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			if len(l.Items) != want {
				return fmt.Sprintf("%s runs %d FlinkDeployments, want %d", member, len(l.Items), want)
			}
		}
		return ""
	})
	for _, member := range []string{"member1", "member2"} {
		pods, err := framework.MemberClient(t, member).CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) != 0 {
			t.Errorf("%s runs %d pods in %s; the workloads make none", member, len(pods.Items), ns)
		}
	}
	// Their bindings collect what the members show (applied, no health)
	// and the fifth, tried again as the clusters' status moves, still has
	// no room: what the members show of the others does not release it.
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		for _, name := range []string{"w1", "w2", "w3", "w4"} {
			_, b, _, err := componentsBinding(ctx, t, ns, name)
			if err != nil {
				return err.Error()
			}
			if len(b.Status.AggregatedStatus) != 1 || !b.Status.AggregatedStatus[0].Applied {
				return fmt.Sprintf("%s collects %+v, want its one cluster applied", name, b.Status.AggregatedStatus)
			}
		}
		return ""
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got, _, cond, err := componentsBinding(t.Context(), t, ns, "w5")
		if err != nil {
			t.Fatal(err)
		}
		if got != "" || cond == nil || cond.Reason != workv1alpha2.BindingReasonUnschedulable {
			t.Fatalf("w5 scheduled to %q (%+v) once the members showed the others", got, cond)
		}
		time.Sleep(time.Second)
	}

	// A workload that goes takes its assumptions with it: w5 fits member1.
	kubectl(t, "delete", "flinkdeployments.sem.flotilla.io", "-n", ns, "w1", "--wait=true")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, _, cond, err := componentsBinding(ctx, t, ns, "w5")
		if err != nil {
			return err.Error()
		}
		if got != "member1"+set || cond == nil || cond.Status != metav1.ConditionTrue {
			return fmt.Sprintf("w5 scheduled to %q (%+v), want member1 once w1 went", got, cond)
		}
		return ""
	})
}
