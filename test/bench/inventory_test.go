package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestInventoryLag (docs/performance.md, "Inventory"): member1's Cluster
// changed n times one after another (FLOTILLA_BENCH_INVENTORY_CHANGES,
// 100), each a new value of a label, which its ClusterProfile shows as a
// property: the time from the Cluster's write to the profile's watch event
// carrying it (P50/P99), and the host's writes of ClusterProfiles per
// change (from the host kube-apiserver's apiserver_request_total).
func TestInventoryLag(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_INVENTORY_CHANGES", 100)
	hc, kc := framework.FastClients(t)
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	profiles := dynamic.NewForConfigOrDie(cfg).Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(names.InventoryNamespace)
	const label = "bench-inventory/step"
	property := func(p *unstructured.Unstructured) string {
		props, _, _ := unstructured.NestedSlice(p.Object, "status", "properties")
		for _, x := range props {
			if m, ok := x.(map[string]any); ok && m["name"] == label {
				v, _ := m["value"].(string)
				return v
			}
		}
		return ""
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		if _, err := profiles.Get(ctx, "member1", metav1.GetOptions{}); err != nil {
			return "member1's profile: " + err.Error()
		}
		return ""
	})
	t.Cleanup(func() {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, label)
		_, _ = kc.ClusterV1alpha1().Clusters().Patch(context.Background(), "member1", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	})
	writes := func() float64 { return hostWritesWithSubresources(t, hc, multiclusterv1alpha1.ClusterProfileResource) }
	before := writes()
	var lags []time.Duration
	for i := range n {
		w, err := profiles.Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=member1"})
		if err != nil {
			t.Fatal(err)
		}
		value := strconv.Itoa(i)
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{label: value}}})
		start := time.Now()
		if _, err := kc.ClusterV1alpha1().Clusters().Patch(t.Context(), "member1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(30 * time.Second)
	wait:
		for {
			select {
			case ev := <-w.ResultChan():
				if p, ok := ev.Object.(*unstructured.Unstructured); ok && ev.Type == watch.Modified && property(p) == value {
					lags = append(lags, time.Since(start))
					break wait
				}
			case <-deadline:
				t.Fatalf("change %d: the profile did not show it in 30 s", i)
			}
		}
		w.Stop()
	}
	perChange := (writes() - before) / float64(n)
	p := func(q float64) time.Duration { return framework.Percentile(lags, q).Round(100 * time.Microsecond) }
	framework.RecordBench(t, "inventory.txt", fmt.Sprintf("ClusterProfile lag behind %d changes of member1's Cluster, one after another: P50 %v, P99 %v, max %v; host ClusterProfile writes per change %.2f\n",
		n, p(0.5), p(0.99), p(1), perChange))
}

// TestDecisionLag (docs/performance.md, "Inventory"): a Deployment's
// PropagationPolicy moved between member1 and member2 n times
// (FLOTILLA_BENCH_DECISION_CHANGES, 50): the time from the binding's watch
// event with the new clusters to the PlacementDecision's carrying them
// (P50/P99), and the host's writes of PlacementDecisions per change.
func TestDecisionLag(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_DECISION_CHANGES", 50)
	hc, kc := framework.FastClients(t)
	cfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	ns := framework.Namespace(t, "bench-decisions")
	policy := func(cluster string) string {
		return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [%s]}}
`, ns, cluster)
	}
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`, ns)+"---\n"+policy("member1"))
	decisions := dynamic.NewForConfigOrDie(cfg).Resource(multiclusterv1alpha1.PlacementDecisions).Namespace(ns)
	first := func(d *unstructured.Unstructured) string {
		list, _, _ := unstructured.NestedSlice(d.Object, "decisions")
		if len(list) != 1 {
			return ""
		}
		name, _, _ := unstructured.NestedString(list[0].(map[string]any), "clusterProfileRef", "name")
		return name
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		d, err := decisions.Get(ctx, "web-deployment-0", metav1.GetOptions{})
		if err != nil || first(d) != "member1" {
			return fmt.Sprintf("the first decision: %v", err)
		}
		return ""
	})
	writes := func() float64 {
		return hostWritesWithSubresources(t, hc, multiclusterv1alpha1.PlacementDecisionResource)
	}
	before := writes()
	var lags []time.Duration
	for i := range n {
		target := []string{"member2", "member1"}[i%2]
		rbw, err := kc.WorkV1alpha2().ResourceBindings(ns).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=web-deployment"})
		if err != nil {
			t.Fatal(err)
		}
		dw, err := decisions.Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=web-deployment-0"})
		if err != nil {
			t.Fatal(err)
		}
		framework.Apply(t, policy(target))
		var scheduled, decided time.Time
		deadline := time.After(30 * time.Second)
		for scheduled.IsZero() || decided.IsZero() {
			select {
			case ev := <-rbw.ResultChan():
				if rb, ok := ev.Object.(*workv1alpha2.ResourceBinding); ok && scheduled.IsZero() && len(rb.Spec.Clusters) == 1 && rb.Spec.Clusters[0].Name == target {
					scheduled = time.Now()
				}
			case ev := <-dw.ResultChan():
				if d, ok := ev.Object.(*unstructured.Unstructured); ok && decided.IsZero() && ev.Type == watch.Modified && first(d) == target {
					decided = time.Now()
				}
			case <-deadline:
				t.Fatalf("change %d: the binding (%v) or the decision (%v) did not move to %s in 30 s", i, !scheduled.IsZero(), !decided.IsZero(), target)
			}
		}
		// Two watches: when the decision's event is read first, the lag
		// was below what they can tell apart.
		lags = append(lags, max(0, decided.Sub(scheduled)))
		rbw.Stop()
		dw.Stop()
	}
	perChange := (writes() - before) / float64(n)
	p := func(q float64) time.Duration { return framework.Percentile(lags, q).Round(100 * time.Microsecond) }
	framework.RecordBench(t, "inventory.txt", fmt.Sprintf("PlacementDecision lag behind %d reschedulings of a binding, one after another: P50 %v, P99 %v, max %v; host PlacementDecision writes per change %.2f\n",
		n, p(0.5), p(0.99), p(1), perChange))
}
