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
	writes := func() float64 {
		raw, err := hc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		ss, err := framework.ParseMetrics(raw)
		if err != nil {
			t.Fatal(err)
		}
		return ss.Sum("apiserver_request_total", func(l map[string]string) bool {
			return l["resource"] == multiclusterv1alpha1.ClusterProfileResource && framework.IsWrite(l["verb"])
		})
	}
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
