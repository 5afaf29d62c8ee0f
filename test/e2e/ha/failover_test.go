package ha

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestApplicationFailoverAcrossLeaderKill: a workload whose policy
// tolerates 40 s of being unhealthy turns unhealthy in its cluster; the
// binding records since when; 15 s into the toleration the leader is
// killed (SIGKILL: the other replica takes over after the 15 s lease).
// The new leader continues the recorded count: the workload leaves its
// cluster at the original deadline (or at the takeover, when that is
// later), not a whole toleration after the takeover.
func TestApplicationFailoverAcrossLeaderKill(t *testing.T) {
	requireHA(t)
	restoreReplicas(t)
	const toleration = 40 * time.Second
	ns := framework.Namespace(t, "ha-app-failover")
	kc := karmada(t)
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: 'nginx:1.27'}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    spreadConstraints: [{spreadByField: cluster, maxGroups: 1, minGroups: 1}]
    replicaScheduling: {replicaSchedulingType: Duplicated}
  failover:
    application:
      decisionConditions: {tolerationSeconds: %[2]d}
      purgeMode: Immediately
`, ns, int(toleration.Seconds())))
	var from string
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		b, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if len(b.Spec.Clusters) != 1 {
			return fmt.Sprintf("scheduled to %v", b.Spec.Clusters)
		}
		from = b.Spec.Clusters[0].Name
		for _, s := range b.Status.AggregatedStatus {
			if s.ClusterName == from && s.Health == workv1alpha2.ResourceHealthy {
				return ""
			}
		}
		return "not yet healthy in " + from
	})

	// Unhealthy in its cluster: an image no member can pull.
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: unpullable, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [%s]}
    overriders:
      imageOverrider: [{component: Registry, operator: replace, value: %s}]
`, ns, from, env.FakeImageRegistry))
	var since time.Time
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		b, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		recorded := failover.ParseUnhealthySince(b.Annotations[flotillav1alpha1.UnhealthySinceAnnotation])
		if recorded[from].IsZero() {
			var health []string
			for _, s := range b.Status.AggregatedStatus {
				health = append(health, s.ClusterName+":"+string(s.Health))
			}
			return fmt.Sprintf("the binding records no unhealthy-since for %s (health %v, clusters %v): %v", from, health, b.Spec.Clusters, b.Annotations)
		}
		since = recorded[from]
		return ""
	})
	t.Logf("unhealthy in %s since %s (recorded on the binding)", from, since.Format(time.RFC3339))

	// 15 s into the toleration, the leader dies.
	time.Sleep(time.Until(since.Add(15 * time.Second)))
	killed := leader(t, time.Minute)
	if err := framework.Env.KillReplica(killed); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	var evictedAt time.Time
	framework.Eventually(t, 3*time.Minute, func(ctx context.Context) string {
		b, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, "web-deployment", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		for _, c := range b.Spec.Clusters {
			if c.Name == from {
				return fmt.Sprintf("still scheduled to %s", from)
			}
		}
		evictedAt = time.Now()
		return ""
	})
	now := leader(t, time.Minute)
	took := evictedAt.Sub(since)
	t.Logf("leader %d killed %.1f s after the workload turned unhealthy; replica %d leads; evicted from %s %.1f s after it turned unhealthy (toleration %s)",
		killed, killedAt.Sub(since).Seconds(), now, from, took.Seconds(), toleration)
	// The deadline, or the takeover (lease 15 s) when later, plus the
	// polling: a count started afresh by the new leader would take
	// toleration after the takeover, about 70 s here.
	if bound := toleration + leaseDuration; took > bound {
		t.Errorf("evicted %.1f s after the workload turned unhealthy, later than the toleration and a takeover (%s): the new leader counted afresh", took.Seconds(), bound)
	}
	if took < toleration-time.Second {
		t.Errorf("evicted %.1f s after the workload turned unhealthy, before the toleration of %s", took.Seconds(), toleration)
	}
}
