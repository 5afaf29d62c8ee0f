package pull

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestPullPropagation: the weighted division's Deployment, an override and a
// dependency ConfigMap reach member3 through its agent, and the status
// comes back, as for the push member.
func TestPullPropagation(t *testing.T) {
	pullMember(t)
	ns := framework.Namespace(t, "pull-s2")
	framework.Apply(t, fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: %[1]s}
data: {mode: prod}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %[1]s}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: nginx:1.27}]
      volumes: [{name: config, configMap: {name: web-config}}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %[1]s}
spec:
  propagateDeps: true
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member3]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted,
      weightPreference: {staticWeightList: [{targetCluster: {clusterNames: [member1]}, weight: 1}, {targetCluster: {clusterNames: [member3]}, weight: 1}]}}
---
apiVersion: policy.karmada.io/v1alpha1
kind: OverridePolicy
metadata: {name: web, namespace: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  overrideRules:
  - targetCluster: {clusterNames: [member3]}
    overriders: {labelsOverrider: [{operator: add, value: {site: edge}}]}
`, ns))
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		d, err := framework.MemberClient(t, "member3").AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return "member3: " + err.Error()
		}
		if d.Labels["site"] != "edge" {
			return fmt.Sprintf("member3's Deployment labels %v, want the override", d.Labels)
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 {
			return fmt.Sprintf("member3 runs %v replicas, want 1", d.Spec.Replicas)
		}
		if _, err := framework.MemberClient(t, "member3").CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{}); err != nil {
			return "member3 dependency: " + err.Error()
		}
		tmpl, err := framework.HostClient(t).AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if tmpl.Status.ReadyReplicas != 2 {
			return fmt.Sprintf("template ready replicas %d, want 2 (both members' pods)", tmpl.Status.ReadyReplicas)
		}
		return ""
	})

	// The agent's execution watches what it applied through its member
	// hub: an object deleted in member3 is applied again within seconds.
	m3 := framework.MemberClient(t, "member3")
	old, err := m3.CoreV1().ConfigMaps(ns).Get(t.Context(), "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m3.CoreV1().ConfigMaps(ns).Delete(t.Context(), "web-config", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		cm, err := m3.CoreV1().ConfigMaps(ns).Get(ctx, "web-config", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if cm.UID == old.UID {
			return "not deleted yet"
		}
		return ""
	})
}
