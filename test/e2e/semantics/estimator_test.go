package semantics

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// memberQuota puts a ResourceQuota of pods into a member's namespace (the
// namespace reaches the members on its own).
func memberQuota(t *testing.T, member, ns string, pods string) {
	t.Helper()
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		_, err := framework.MemberClient(t, member).CoreV1().ResourceQuotas(ns).Create(ctx, &corev1.ResourceQuota{
			ObjectMeta: metav1.ObjectMeta{Name: "sem-pods", Namespace: ns},
			Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(pods)}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err.Error()
		}
		return ""
	})
	// The member's quota controller fills status.used; the estimator needs it.
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		q, err := framework.MemberClient(t, member).CoreV1().ResourceQuotas(ns).Get(ctx, "sem-pods", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if _, ok := q.Status.Used[corev1.ResourcePods]; !ok {
			return "quota status not computed yet"
		}
		return ""
	})
}

// waitQuotaUsed waits until memberQuota's quota in member counts pods.
func waitQuotaUsed(t *testing.T, member, ns string, pods int64) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		q, err := framework.MemberClient(t, member).CoreV1().ResourceQuotas(ns).Get(ctx, "sem-pods", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if used := q.Status.Used[corev1.ResourcePods]; used.Value() != pods {
			return fmt.Sprintf("%s quota uses %s pods, want %d", member, used.String(), pods)
		}
		return ""
	})
}

// scheduled returns the binding's clusters as "name:replicas" and its
// Scheduled condition.
func scheduled(ctx context.Context, t *testing.T, ns, name string) (string, *metav1.Condition, error) {
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-deployment", metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	out := ""
	for _, c := range b.Spec.Clusters {
		out += fmt.Sprintf("%s:%d ", c.Name, c.Replicas)
	}
	return out, meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled), nil
}

func waitScheduled(t *testing.T, ns, name, want string) {
	t.Helper()
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, _, err := scheduled(ctx, t, ns, name)
		if err != nil {
			return err.Error()
		}
		if got != want {
			return fmt.Sprintf("scheduled to %q, want %q", got, want)
		}
		return ""
	})
}

// TestOverflowByMemberQuota: the scheduler estimates
// from the members' own quotas: replicas spill from the affinity's cluster
// to its overflow affinity when its quota is full, and come back when the
// workload shrinks.
func TestOverflowByMemberQuota(t *testing.T) {
	ns := framework.Namespace(t, "sem-overflow")
	memberQuota(t, "member1", ns, "3")
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinities:
    - affinityName: primary
      clusterNames: [member1]
      overflowAffinities: [{affinityName: burst, clusterNames: [member2]}]
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
`, ns)
	framework.Apply(t, nginx(ns, "web", 2, "")+"---\n"+policy)
	waitScheduled(t, ns, "web", "member1:2 ")
	// Scale once member1's quota counts the two pods: before that, the
	// replicas the binding holds there are not in the quota's use yet.
	waitQuotaUsed(t, "member1", ns, 2)
	framework.Apply(t, nginx(ns, "web", 5, ""))
	waitScheduled(t, ns, "web", "member1:3 member2:2 ")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		d, err := framework.MemberClient(t, "member2").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
			return fmt.Sprintf("member2 runs %v replicas, want 2", d.Spec.Replicas)
		}
		return ""
	})
	framework.Apply(t, nginx(ns, "web", 2, ""))
	waitScheduled(t, ns, "web", "member1:2 ")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string { return deploymentGone(ctx, t, "member2", ns, "web") })
}

// TestUnschedulableByMemberQuota: a Deployment no
// member's quota can hold stays unscheduled, with a condition saying so.
func TestUnschedulableByMemberQuota(t *testing.T) {
	ns := framework.Namespace(t, "sem-noroom")
	memberQuota(t, "member1", ns, "1")
	memberQuota(t, "member2", ns, "1")
	framework.Apply(t, nginx(ns, "web", 5, "")+fmt.Sprintf(`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}
`, ns))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, cond, err := scheduled(ctx, t, ns, "web")
		if err != nil {
			return err.Error()
		}
		if got != "" {
			return fmt.Sprintf("scheduled to %q despite the quotas", got)
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonUnschedulable {
			return fmt.Sprintf("Scheduled condition %+v, want False/Unschedulable", cond)
		}
		return ""
	})
	_, cond, _ := scheduled(t.Context(), t, ns, "web")
	t.Logf("condition: %s", cond.Message)
	waitEvent(t, ns, "Deployment", "web", "ScheduleBindingFailed", "not enough")
}
