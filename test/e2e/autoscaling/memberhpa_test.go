package autoscaling

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestMemberHPADoesNotFight: an HPA propagated to both members scales
// each member's part of a divided Deployment; the template is marked
// retain-replicas, the members keep the replicas their HPAs set, and the
// template follows their sum instead of resetting them.
func TestMemberHPADoesNotFight(t *testing.T) {
	ns := framework.Namespace(t, "s8-member-hpa")
	framework.Apply(t, nginx(ns, 2, "20m"))
	framework.Apply(t, fmt.Sprintf(`apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: nginx, namespace: %[1]s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 1
  maxReplicas: 3
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 10}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: nginx-hpa, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: autoscaling/v2, kind: HorizontalPodAutoscaler, name: nginx}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`, ns))

	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		d, err := host(t).AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if d.Labels["resourcetemplate.karmada.io/retain-replicas"] != "true" {
			return fmt.Sprintf("template labels %v, want retain-replicas=true", d.Labels)
		}
		return ""
	})
	// Each member's HPA takes its part to its maximum, 3; the template
	// follows with 6.
	want := func(ctx context.Context) string {
		got := map[string]int32{}
		for _, m := range members {
			d, err := member(t, m).AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			got[m] = *d.Spec.Replicas
		}
		d, err := host(t).AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if got["member1"] != 3 || got["member2"] != 3 || *d.Spec.Replicas != 6 {
			return fmt.Sprintf("member replicas %v, template %d; want 3 in each member and 6 in the template", got, *d.Spec.Replicas)
		}
		return ""
	}
	framework.Eventually(t, 3*time.Minute, want)
	// And it stays so: nothing resets the members.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if msg := want(t.Context()); msg != "" {
			t.Fatalf("replicas changed after settling: %s", msg)
		}
		time.Sleep(2 * time.Second)
	}
}
