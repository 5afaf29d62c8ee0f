package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// A WorkloadRebalancer reschedules its workloads afresh: a Deployment
// divided by available replicas while member2 was tainted stays all in
// member1 once the taint goes (the scheduler keeps what it placed), until
// a rebalancer names it; then it is divided over both. The rebalancer
// reports each workload's result, its finish time, and is deleted after
// its TTL.
func TestWorkloadRebalancer(t *testing.T) {
	ns := framework.Namespace(t, "sem-rebalance")
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "workloadrebalancer", "sem-rebalance", "--ignore-not-found")
	})
	heldInMember1(t, ns, "sem-rebalance")

	framework.Apply(t, fmt.Sprintf(`apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata: {name: sem-rebalance}
spec:
  workloads:
  - {apiVersion: apps/v1, kind: Deployment, namespace: %[1]s, name: web}
  - {apiVersion: apps/v1, kind: Deployment, namespace: %[1]s, name: missing}
  ttlSecondsAfterFinished: 8
`, ns))
	waitScheduled(t, ns, "web", "member1:2 member2:2 ")
	var r *appsv1alpha1.WorkloadRebalancer
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		var err error
		r, err = framework.Karmada(t).AppsV1alpha1().WorkloadRebalancers().Get(ctx, "sem-rebalance", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if r.Status.FinishTime == nil || len(r.Status.ObservedWorkloads) != 2 {
			return fmt.Sprintf("status %+v", r.Status)
		}
		return ""
	})
	for _, o := range r.Status.ObservedWorkloads {
		switch o.Workload.Name {
		case "web":
			if o.Result != appsv1alpha1.RebalanceSuccessful {
				t.Errorf("web: %+v, want Successful", o)
			}
		case "missing":
			if o.Result != appsv1alpha1.RebalanceFailed || o.Reason != appsv1alpha1.RebalanceObjectNotFound {
				t.Errorf("missing: %+v, want Failed ReferencedBindingNotFound", o)
			}
		}
	}
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec.RescheduleTriggeredAt == nil || !b.Spec.RescheduleTriggeredAt.Equal(&r.CreationTimestamp) {
		t.Errorf("binding rescheduleTriggeredAt %v, want the rebalancer's creation %v", b.Spec.RescheduleTriggeredAt, r.CreationTimestamp)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		_, err := framework.Karmada(t).AppsV1alpha1().WorkloadRebalancers().Get(ctx, "sem-rebalance", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Sprintf("rebalancer still there after its TTL: %v", err)
		}
		return ""
	})
}

// A reschedule trigger in the second of the binding's last run (a
// WorkloadRebalancer created just after its workload was scheduled: Karmada
// writes the rebalancer's creation time, which then equals
// lastScheduledTime) is honoured once: the workload is divided afresh, and
// lastScheduledTime is not before the trigger afterwards. The trigger is
// written here as a rebalancer would, equal to lastScheduledTime, so the
// case does not depend on the clock.
func TestRescheduleTriggerInTheSecondOfTheLastRun(t *testing.T) {
	ns := framework.Namespace(t, "sem-trigger")
	heldInMember1(t, ns, "sem-trigger")
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Status.LastScheduledTime == nil {
		t.Fatal("before the trigger: no last run")
	}
	trigger := *b.Status.LastScheduledTime
	kubectl(t, "patch", "rb", "web-deployment", "-n", ns, "--type=merge", "-p",
		fmt.Sprintf(`{"spec":{"rescheduleTriggeredAt":%q}}`, trigger.UTC().Format(time.RFC3339)))
	waitScheduled(t, ns, "web", "member1:2 member2:2 ")
	b, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec.RescheduleTriggeredAt == nil || !b.Spec.RescheduleTriggeredAt.Equal(&trigger) {
		t.Errorf("rescheduleTriggeredAt %v, want %v as written", b.Spec.RescheduleTriggeredAt, trigger)
	}
	if last := b.Status.LastScheduledTime; last == nil || last.Before(&trigger) {
		t.Errorf("lastScheduledTime %v is before the trigger %v", last, trigger)
	}
	// Served once: the binding's result stays, the run is not repeated.
	last := b.Status.LastScheduledTime.DeepCopy()
	time.Sleep(3 * time.Second)
	b, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Status.LastScheduledTime.Equal(last) {
		t.Errorf("the trigger was run again: lastScheduledTime %v, was %v", b.Status.LastScheduledTime, last)
	}
}

// heldInMember1 makes Deployment web of 4 replicas in ns, divided by
// available replicas over member1 and member2 while member2 is tainted
// (NoSchedule, key taint), so all 4 go to member1; then the taint goes,
// and the placement is kept (the scheduler keeps what it placed).
func heldInMember1(t *testing.T, ns, taint string) {
	t.Helper()
	kubectl(t, "patch", "cluster", "member2", "--type=merge", "-p", fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"effect":"NoSchedule"}]}}`, taint))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "patch", "cluster", "member2", "--type=merge", "-p", `{"spec":{"taints":null}}`)
	})
	framework.Apply(t, nginx(ns, "web", 4, "")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`, ns))
	waitScheduled(t, ns, "web", "member1:4 ")
	kubectl(t, "patch", "cluster", "member2", "--type=merge", "-p", `{"spec":{"taints":null}}`)
	time.Sleep(3 * time.Second)
	if got, _, err := scheduled(t.Context(), t, ns, "web"); err != nil || got != "member1:4 " {
		t.Fatalf("with member2 untainted: scheduled to %q (%v), want the placement kept in member1", got, err)
	}
}
