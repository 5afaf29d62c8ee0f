package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

func propagationPolicy(ns, name, target string, priority int, preemption, selectorName string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  priority: %[4]d
  preemption: %[5]s
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: %[6]s}]
  placement: {clusterAffinity: {clusterNames: [%[3]s]}}
`, ns, name, target, priority, preemption, selectorName)
}

// claimedBy tells "" when the Deployment's template is claimed by the
// PropagationPolicy ns/policy (or, with ns "", the ClusterPropagationPolicy).
func claimedBy(ctx context.Context, t *testing.T, ns, name, policyNS, policy string) string {
	d, err := framework.HostClient(t).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	a := d.Annotations
	if policyNS == "" {
		if a["clusterpropagationpolicy.karmada.io/name"] != policy || a["propagationpolicy.karmada.io/name"] != "" {
			return fmt.Sprintf("template claimed by %v, want cluster policy %s", a, policy)
		}
		return ""
	}
	if a["propagationpolicy.karmada.io/namespace"] != policyNS || a["propagationpolicy.karmada.io/name"] != policy ||
		a["clusterpropagationpolicy.karmada.io/name"] != "" {
		return fmt.Sprintf("template claimed by %v, want %s/%s", a, policyNS, policy)
	}
	return ""
}

// waitMoved waits until the Deployment ns/name is claimed by the policy
// policyNS/policy and runs in member to, no longer in member from.
func waitMoved(t *testing.T, ns, name, policyNS, policy, to, from string) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := claimedBy(ctx, t, ns, name, policyNS, policy); s != "" {
			return s
		}
		if s := deploymentIn(ctx, t, to, ns, name); s != "" {
			return s
		}
		return deploymentGone(ctx, t, from, ns, name)
	})
}

// TestPreemption: a higher-priority PropagationPolicy with preemption Always
// takes a template from a lower one and moves the workload; lowering its
// priority hands nothing back until the other policy preempts in turn;
// preemption Never never takes.
func TestPreemption(t *testing.T) {
	ns := framework.Namespace(t, "sem-preempt")
	framework.Apply(t, nginx(ns, "web", 1, "")+"---\n"+propagationPolicy(ns, "low", "member1", 1, "Never", "web"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := claimedBy(ctx, t, ns, "web", ns, "low"); s != "" {
			return s
		}
		return deploymentIn(ctx, t, "member1", ns, "web")
	})
	// A higher priority without preemption does not take it.
	framework.Apply(t, propagationPolicy(ns, "never", "member2", 10, "Never", "web"))
	time.Sleep(3 * time.Second)
	if s := claimedBy(t.Context(), t, ns, "web", ns, "low"); s != "" {
		t.Fatalf("preemption Never took the template: %s", s)
	}
	kubectl(t, "delete", "propagationpolicy", "-n", ns, "never")

	// Preemption: high takes it and the workload moves to member2.
	framework.Apply(t, propagationPolicy(ns, "high", "member2", 5, "Always", "web"))
	waitMoved(t, ns, "web", ns, "high", "member2", "member1")
	waitEvent(t, ns, "Deployment", "web", "PreemptPolicySucceed",
		fmt.Sprintf("Propagation policy(%[1]s/high) preempted propagation policy(%[1]s/low) successfully", ns))
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Labels["propagationpolicy.karmada.io/permanent-id"] == "" || b.Annotations["propagationpolicy.karmada.io/name"] != "high" {
		t.Errorf("binding claim not moved to high: labels %v annotations %v", b.Labels, b.Annotations)
	}

	// Lowering the winner's priority below the loser's hands nothing back
	// while the loser does not preempt.
	framework.Apply(t, propagationPolicy(ns, "high", "member2", 0, "Always", "web"))
	time.Sleep(3 * time.Second)
	if s := claimedBy(t.Context(), t, ns, "web", ns, "high"); s != "" {
		t.Fatalf("lowering the priority handed the template back: %s", s)
	}
	// Now the loser preempts in turn.
	framework.Apply(t, propagationPolicy(ns, "low", "member1", 1, "Always", "web"))
	waitMoved(t, ns, "web", ns, "low", "member1", "member2")
	waitEvent(t, ns, "Deployment", "web", "PreemptPolicySucceed",
		fmt.Sprintf("Propagation policy(%[1]s/low) preempted propagation policy(%[1]s/high) successfully", ns))
}

// TestPreemptionOfClusterPolicy: a PropagationPolicy with preemption
// Always takes a template from a ClusterPropagationPolicy whatever their
// priorities (a namespaced policy beats a cluster one).
func TestPreemptionOfClusterPolicy(t *testing.T) {
	ns := framework.Namespace(t, "sem-preempt-cpp")
	framework.Apply(t, nginx(ns, "api", 1, "")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: sem-preempt-cpp}
spec:
  priority: 50
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %s, name: api}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns))
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "sem-preempt-cpp", "--ignore-not-found")
	})
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := claimedBy(ctx, t, ns, "api", "", "sem-preempt-cpp"); s != "" {
			return s
		}
		return deploymentIn(ctx, t, "member1", ns, "api")
	})
	framework.Apply(t, propagationPolicy(ns, "team", "member2", 0, "Always", "api"))
	waitMoved(t, ns, "api", ns, "team", "member2", "member1")
	waitEvent(t, ns, "Deployment", "api", "PreemptPolicySucceed",
		fmt.Sprintf("Propagation policy(%s/team) preempted cluster propagation policy(sem-preempt-cpp) successfully", ns))
}
