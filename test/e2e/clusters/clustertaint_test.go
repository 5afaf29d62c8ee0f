package clusters

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// A ClusterTaintPolicy taints the clusters it targets while their
// conditions match (TaintClusterSucceed on the cluster), leaves the others
// alone, and removes its taints when the remove conditions match; a
// NoExecute taint is refused (no eviction runs on this control plane).
func TestClusterTaintPolicy(t *testing.T) {
	const key = "flotilla.io/maintenance"
	policy := func(removeOn string) string {
		return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: e2e-maintenance}
spec:
  targetClusters: {clusterNames: [member2]}
  addOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: [%s]}]
  taints: [{key: %s, value: planned, effect: NoSchedule}]
`, removeOn, key)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = kubectl(t, "delete", "clustertaintpolicy", "e2e-maintenance", "--ignore-not-found")
		// Deleting a policy leaves its taints, as in Karmada: take it off.
		c, err := karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member2", metav1.GetOptions{})
		if err != nil {
			return
		}
		var keep []corev1.Taint
		for _, tn := range c.Spec.Taints {
			if tn.Key != key {
				keep = append(keep, tn)
			}
		}
		c.Spec.Taints = keep
		_, _ = karmada(t).ClusterV1alpha1().Clusters().Update(ctx, c, metav1.UpdateOptions{})
	})
	tainted := func(ctx context.Context, name string) (bool, error) {
		c, err := karmada(t).ClusterV1alpha1().Clusters().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, tn := range c.Spec.Taints {
			if tn.Key == key && tn.Effect == corev1.TaintEffectNoSchedule && tn.Value == "planned" && tn.TimeAdded != nil {
				return true, nil
			}
		}
		return false, nil
	}
	framework.Apply(t, policy(`"False"`))
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if ok, err := tainted(ctx, "member2"); err != nil || !ok {
			return fmt.Sprintf("member2 not tainted %s (%v)", key, err)
		}
		return ""
	})
	if ok, _ := tainted(t.Context(), "member1"); ok {
		t.Errorf("member1, not targeted, was tainted")
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		evs, err := framework.HostClient(t).CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Cluster,involvedObject.name=member2,reason=TaintClusterSucceed"})
		if err != nil {
			return err.Error()
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "Update Cluster(member2) with taints(") && strings.Contains(e.Message, key+"=planned:NoSchedule") {
				return ""
			}
		}
		return fmt.Sprintf("no TaintClusterSucceed event naming the taint on member2 (%d events)", len(evs.Items))
	})

	// Removed when the remove conditions match (here: Ready True too; the
	// policy now both adds and removes, and removal comes last).
	framework.Apply(t, policy(`"True"`))
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		if ok, err := tainted(ctx, "member2"); err != nil || ok {
			return fmt.Sprintf("member2 still tainted %s (%v)", key, err)
		}
		return ""
	})

	// NoExecute is refused with a field error, and nothing is stored.
	out, err := kubectl(t, "patch", "clustertaintpolicy", "e2e-maintenance", "--type=merge", "-p",
		`{"spec":{"taints":[{"key":"`+key+`","effect":"NoExecute"}]}}`)
	if err == nil || !strings.Contains(out, "spec.taints[0].effect") || !strings.Contains(out, "NoExecute") {
		t.Errorf("a NoExecute taint: %v\n%s\nwant a field error on spec.taints[0].effect", err, out)
	}
	p, err := framework.Karmada(t).PolicyV1alpha1().ClusterTaintPolicies().Get(t.Context(), "e2e-maintenance", metav1.GetOptions{})
	if err != nil || p.Spec.Taints[0].Effect != corev1.TaintEffectNoSchedule {
		t.Errorf("the refused change was stored: %+v %v", p, err)
	}
}
