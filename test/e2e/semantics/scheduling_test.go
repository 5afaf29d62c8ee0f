package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestSchedulePriority: the binding inherits the value
// of the control plane's PriorityClass the policy names; a policy naming a
// missing PriorityClass creates no binding and says why, until the
// PriorityClass exists.
func TestSchedulePriority(t *testing.T) {
	ns := framework.Namespace(t, "sem-priority")
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "priorityclass", "sem-urgent", "--ignore-not-found") })
	framework.Apply(t, nginx(ns, "web", 1, "")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  schedulePriority: {priorityClassSource: KubePriorityClass, priorityClassName: sem-urgent}
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, ns))
	waitEvent(t, ns, "Deployment", "web", "ApplyPolicyFailed", `"sem-urgent" not found`)
	if _, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(t.Context(), "web-deployment", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("a binding exists while its PriorityClass is missing: %v", err)
	}
	framework.Apply(t, `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: sem-urgent}
value: 1000
`)
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if b.Spec.SchedulePriority == nil || b.Spec.SchedulePriority.Priority != 1000 {
			return fmt.Sprintf("binding schedulePriority %+v, want 1000", b.Spec.SchedulePriority)
		}
		return deploymentIn(ctx, t, "member1", ns, "web")
	})
}

// TestSuspension: a suspended policy holds the Works
// back; per-cluster suspension holds back that cluster only; an empty
// suspension resumes dispatching everywhere.
func TestSuspension(t *testing.T) {
	ns := framework.Namespace(t, "sem-suspend")
	policy := func(suspension string) string {
		return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  suspension: %s
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, ns, suspension)
	}
	framework.Apply(t, nginx(ns, "web", 1, "")+"---\n"+policy("{dispatching: true}"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if len(b.Spec.Clusters) != 2 {
			return fmt.Sprintf("binding scheduled to %v", b.Spec.Clusters)
		}
		return ""
	})
	time.Sleep(3 * time.Second)
	for _, m := range []string{"member1", "member2"} {
		if deploymentIn(t.Context(), t, m, ns, "web") == "" {
			t.Fatalf("suspended Deployment reached %s", m)
		}
	}
	framework.Apply(t, policy("{dispatchingOnClusters: {clusterNames: [member2]}}"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return deploymentIn(ctx, t, "member1", ns, "web")
	})
	if deploymentIn(t.Context(), t, "member2", ns, "web") == "" {
		t.Fatal("Deployment reached member2, whose dispatching is suspended")
	}
	framework.Apply(t, policy("{}"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return deploymentIn(ctx, t, "member2", ns, "web")
	})
}

// TestRescheduleOnClusterChange: labelling a cluster so
// that it matches a policy's affinity brings the workload (a Deployment
// and a cluster-scoped ClusterRole) there; removing the label takes it
// away.
func TestRescheduleOnClusterChange(t *testing.T) {
	ns := framework.Namespace(t, "sem-relabel")
	t.Cleanup(func() {
		_, _ = framework.Kubectl(t, "label", "cluster", "member2", "sem-relabel-")
		_, _ = framework.Kubectl(t, "delete", "clusterrole", "sem-relabel-reader", "--ignore-not-found")
		_, _ = framework.Kubectl(t, "delete", "clusterpropagationpolicy", "sem-relabel", "--ignore-not-found")
	})
	framework.Apply(t, nginx(ns, "web", 1, "")+fmt.Sprintf(`---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: sem-relabel-reader}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {labelSelector: {matchLabels: {sem-relabel: "on"}}}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: sem-relabel}
spec:
  resourceSelectors: [{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: sem-relabel-reader}]
  placement: {clusterAffinity: {labelSelector: {matchLabels: {sem-relabel: "on"}}}}
`, ns))
	roleIn := func(ctx context.Context, m string) bool {
		_, err := framework.MemberClient(t, m).RbacV1().ClusterRoles().Get(ctx, "sem-relabel-reader", metav1.GetOptions{})
		return err == nil
	}
	time.Sleep(3 * time.Second)
	if deploymentIn(t.Context(), t, "member2", ns, "web") == "" || roleIn(t.Context(), "member2") {
		t.Fatal("placed on member2 before it matched")
	}
	kubectl(t, "label", "cluster", "member2", "sem-relabel=on")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if !roleIn(ctx, "member2") {
			return "ClusterRole not in member2"
		}
		return deploymentIn(ctx, t, "member2", ns, "web")
	})
	kubectl(t, "label", "cluster", "member2", "sem-relabel-")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if roleIn(ctx, "member2") {
			return "ClusterRole still in member2"
		}
		return deploymentGone(ctx, t, "member2", ns, "web")
	})
}

// TestSpreadByRegion: spreadConstraints by region over
// clusters that carry regions: 1 region (minGroups = maxGroups = 1) picks
// one, 2 both. (As Karmada, the fewest regions the constraints allow are
// taken: minGroups 1 and maxGroups 2 also pick one.)
func TestSpreadByRegion(t *testing.T) {
	ns := framework.Namespace(t, "sem-region")
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
	policy := func(maxGroups int) string {
		return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    spreadConstraints: [{spreadByField: region, minGroups: %[2]d, maxGroups: %[2]d}, {spreadByField: cluster, minGroups: 1, maxGroups: 2}]
`, ns, maxGroups)
	}
	clustersOf := func(ctx context.Context) ([]string, string) {
		b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return nil, err.Error()
		}
		var out []string
		for _, c := range b.Spec.Clusters {
			out = append(out, c.Name)
		}
		return out, ""
	}
	framework.Apply(t, nginx(ns, "web", 1, "")+"---\n"+policy(1))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		cs, msg := clustersOf(ctx)
		if msg != "" {
			return msg
		}
		if len(cs) != 1 {
			return fmt.Sprintf("scheduled to %v, want one region", cs)
		}
		return deploymentIn(ctx, t, cs[0], ns, "web")
	})
	framework.Apply(t, policy(2))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		cs, msg := clustersOf(ctx)
		if msg != "" {
			return msg
		}
		if strings.Join(cs, ",") != "member1,member2" {
			return fmt.Sprintf("scheduled to %v, want both regions", cs)
		}
		return ""
	})
}

// TestLazyActivation: a Lazy policy's
// change waits for the template's next change; a Lazy policy preempting
// takes the claim at once, and the workload moves with the template's next
// change.
func TestLazyActivation(t *testing.T) {
	ns := framework.Namespace(t, "sem-lazy")
	policy := func(name, target string, priority int, preemption string) string {
		return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  activationPreference: Lazy
  priority: %[4]d
  preemption: %[5]s
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%[3]s]}}
`, ns, name, target, priority, preemption)
	}
	// The policy comes first: a template that exists before a Lazy policy
	// waits for its next change (TestLazyActivationFirstMatch).
	framework.Apply(t, policy("lazy", "member1", 0, "Never"))
	time.Sleep(3 * time.Second)
	framework.Apply(t, nginx(ns, "web", 1, ""))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string { return deploymentIn(ctx, t, "member1", ns, "web") })
	framework.Apply(t, policy("lazy", "member2", 0, "Never"))
	time.Sleep(4 * time.Second)
	if deploymentIn(t.Context(), t, "member2", ns, "web") == "" {
		t.Fatal("a Lazy policy change moved the workload before the template changed")
	}
	framework.Apply(t, nginx(ns, "web", 2, ""))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if s := deploymentIn(ctx, t, "member2", ns, "web"); s != "" {
			return s
		}
		return deploymentGone(ctx, t, "member1", ns, "web")
	})
	// A Lazy policy that preempts takes the template at once, and moves it
	// with its next change.
	framework.Apply(t, policy("lazy-high", "member1", 5, "Always"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return claimedBy(ctx, t, ns, "web", ns, "lazy-high")
	})
	framework.Apply(t, nginx(ns, "web", 3, ""))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		return deploymentIn(ctx, t, "member1", ns, "web")
	})
}
