package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// binding reads the ResourceBinding of Deployment name.
func binding(ctx context.Context, t *testing.T, ns, name string) (*workv1alpha2.ResourceBinding, error) {
	return framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-deployment", metav1.GetOptions{})
}

// TestAffinityTermKeptAndRunsStamped: a binding that
// moved to a later clusterAffinities term stays there when an earlier
// term becomes eligible again; the run that finds it so is stamped
// (lastScheduledTime moves, schedulerObservedGeneration is current) with
// the result unchanged; a WorkloadRebalancer then moves it back to the
// first term.
func TestAffinityTermKeptAndRunsStamped(t *testing.T) {
	ns := framework.Namespace(t, "sem-terms")
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "label", "cluster", "member1", "sem-terms-")
		_, _ = framework.Kubectl(t, "delete", "workloadrebalancer", "sem-terms", "--ignore-not-found")
	})
	framework.Apply(t, nginx(ns, "web", 1, "")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinities:
    - affinityName: primary
      labelSelector: {matchLabels: {sem-terms: primary}}
    - affinityName: backup
      clusterNames: [member2]
`, ns))
	waitScheduled(t, ns, "web", "member2:1 ")
	b, err := binding(t.Context(), t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if b.Status.SchedulerObservedAffinityName != "backup" || b.Status.LastScheduledTime == nil {
		t.Fatalf("status %+v, want the backup term and a lastScheduledTime", b.Status)
	}
	first := b.Status.LastScheduledTime.Time
	time.Sleep(1100 * time.Millisecond) // lastScheduledTime has seconds
	kubectl(t, "label", "cluster", "member1", "sem-terms=primary")
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns, "web")
		if err != nil {
			return err.Error()
		}
		if b.Status.LastScheduledTime == nil || !b.Status.LastScheduledTime.After(first) {
			return fmt.Sprintf("lastScheduledTime %v not after %v: the run was not stamped", b.Status.LastScheduledTime, first)
		}
		if b.Status.SchedulerObservedGeneration != b.Generation {
			return fmt.Sprintf("schedulerObservedGeneration %d, generation %d", b.Status.SchedulerObservedGeneration, b.Generation)
		}
		return ""
	})
	if got, _, err := scheduled(t.Context(), t, ns, "web"); err != nil || got != "member2:1 " {
		t.Fatalf("once primary is eligible: scheduled to %q (%v), want member2 kept", got, err)
	}
	if b, err := binding(t.Context(), t, ns, "web"); err != nil || b.Status.SchedulerObservedAffinityName != "backup" {
		t.Fatalf("once primary is eligible: affinity %q (%v), want backup kept", b.Status.SchedulerObservedAffinityName, err)
	}
	// Straight away: a rebalancer created in the second of the last run
	// still reschedules (its trigger is the second after that run).
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata: {name: sem-terms}
spec:
  workloads: [{apiVersion: apps/v1, kind: Deployment, namespace: %s, name: web}]
`, ns))
	waitScheduled(t, ns, "web", "member1:1 ")
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		b, err := binding(ctx, t, ns, "web")
		if err != nil {
			return err.Error()
		}
		if b.Status.SchedulerObservedAffinityName != "primary" {
			return "affinity " + b.Status.SchedulerObservedAffinityName + ", want primary"
		}
		return ""
	})
}

// TestSteadyScaleUpChecksOnlyTheAdded: in steady dynamic
// division only the added replicas must fit the member's free room, and
// the replicas the binding holds there are no room: under a quota of 5
// pods holding 3, a scale to 6 is Unschedulable with the 3 kept, a scale
// to 5 fits.
func TestSteadyScaleUpChecksOnlyTheAdded(t *testing.T) {
	ns := framework.Namespace(t, "sem-scaleup")
	memberQuota(t, "member1", ns, "5")
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}
`, ns)
	framework.Apply(t, nginx(ns, "web", 3, "")+"---\n"+policy)
	waitScheduled(t, ns, "web", "member1:3 ")
	waitQuotaUsed(t, "member1", ns, 3)
	framework.Apply(t, nginx(ns, "web", 6, ""))
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		got, cond, err := scheduled(ctx, t, ns, "web")
		if err != nil {
			return err.Error()
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonUnschedulable {
			return fmt.Sprintf("Scheduled condition %+v, want False/Unschedulable", cond)
		}
		if got != "member1:3 " {
			return fmt.Sprintf("scheduled to %q, want member1:3 kept", got)
		}
		return ""
	})
	waitEvent(t, ns, "Deployment", "web", "ScheduleBindingFailed", "Clusters available replicas 2 are not enough to schedule.")
	framework.Apply(t, nginx(ns, "web", 5, ""))
	waitScheduled(t, ns, "web", "member1:5 ")
}

// TestRegionSpreadOutranksClusterCount: with a region
// spread of minGroups 2 and a cluster spread of maxGroups 1, one cluster
// per region is still chosen (two in all), as Karmada does; it scheduled
// nothing before.
func TestRegionSpreadOutranksClusterCount(t *testing.T) {
	ns := framework.Namespace(t, "sem-region2")
	setRegion := func(m, r string) {
		v := `"` + r + `"`
		if r == "" {
			v = "null"
		}
		kubectl(t, "patch", "cluster", m, "--type=merge", "-p", `{"spec":{"region":`+v+`}}`)
	}
	setRegion("member1", "sem-east")
	setRegion("member2", "sem-west")
	t.Cleanup(func() { setRegion("member1", ""); setRegion("member2", "") })
	framework.Apply(t, nginx(ns, "web", 2, "")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    spreadConstraints: [{spreadByField: region, minGroups: 2, maxGroups: 2}, {spreadByField: cluster, minGroups: 1, maxGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}
`, ns))
	waitScheduled(t, ns, "web", "member1:1 member2:1 ")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := deploymentIn(ctx, t, "member1", ns, "web"); s != "" {
			return s
		}
		return deploymentIn(ctx, t, "member2", ns, "web")
	})
}
