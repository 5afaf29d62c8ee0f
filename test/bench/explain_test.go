package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestExplainAnswer (docs/performance.md, "Drift and explain"): with 100
// Clusters (the three members and aliases of their endpoints, each a
// Cluster with its own status), a Deployment divided over all of them
// (placed, its dispatching suspended); its
// binding's explain subresource read n times one after another
// (FLOTILLA_BENCH_EXPLAINS, 200) once it is applied everywhere: the
// answer's P50/P99, each listing the 100 clusters. A plain GET of the
// same binding, alternating with them, is the baseline.
func TestExplainAnswer(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_EXPLAINS", 200)
	const total = 100
	hc, kc := framework.FastClients(t)
	members := []string{"member1", "member2", "member3"}
	all := append([]string(nil), members...)
	for i := 0; len(all) < total; i++ {
		m := members[i%len(members)]
		c, err := kc.ClusterV1alpha1().Clusters().Get(t.Context(), m, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		alias := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "explain-alias" + strconv.Itoa(i), Labels: map[string]string{"bench-explain/alias-of": m}},
			Spec: *c.Spec.DeepCopy()}
		alias.Spec.ID = ""
		if _, err := kc.ClusterV1alpha1().Clusters().Create(t.Context(), alias, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s: %v", alias.Name, err)
		}
		t.Cleanup(func() {
			_ = kc.ClusterV1alpha1().Clusters().Delete(context.Background(), alias.Name, metav1.DeleteOptions{})
		})
		all = append(all, alias.Name)
	}
	if err := framework.Env.WaitClustersReady(t.Context(), all, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	const ns = "bench-explain"
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](200), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}}}},
	}
	if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement: policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
				WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}}},
			// Placed, not dispatched: the aliases share their member's
			// objects, which 100 Works would fight over.
			Suspension: &policyv1alpha1.Suspension{Dispatching: ptr.To(true)},
		}}
	if _, err := kc.PolicyV1alpha1().PropagationPolicies(ns).Create(t.Context(), pp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := names.BindingName("Deployment", "web")
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		rb, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if len(rb.Spec.Clusters) == 0 {
			return "not scheduled yet"
		}
		if !meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
			return "not scheduled yet"
		}
		return ""
	})
	// Measured under the bed's steady load (each Cluster's status and
	// member watches), once the 100 Works are written.
	time.Sleep(15 * time.Second)
	rc := kc.WorkV1alpha2().RESTClient()
	explain := func(ctx context.Context) error {
		raw, err := rc.Get().Namespace(ns).Resource("resourcebindings").Name(binding).SubResource(flotillav1alpha1.ExplainSubresource).DoRaw(ctx)
		if err != nil {
			return err
		}
		e := &flotillav1alpha1.PlacementExplanation{}
		if err := json.Unmarshal(raw, e); err != nil {
			return err
		}
		if len(e.Clusters) != total {
			return fmt.Errorf("%d clusters explained, want %d", len(e.Clusters), total)
		}
		return nil
	}
	get := func(ctx context.Context) error {
		_, err := kc.WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		return err
	}
	timed := func(f func(context.Context) error) time.Duration {
		start := time.Now()
		if err := f(t.Context()); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// The two alternate, so that both meet the same load.
	var plain, explained []time.Duration
	for range n {
		plain = append(plain, timed(get))
		explained = append(explained, timed(explain))
	}
	p := func(lat []time.Duration, q float64) time.Duration {
		return framework.Percentile(lat, q).Round(10 * time.Microsecond)
	}
	framework.RecordBench(t, "explain.txt", fmt.Sprintf("explain over %d Clusters (%d members, the rest aliases), %d reads one after another: P50 %v, P99 %v, max %v; a plain GET of the same binding: P50 %v, P99 %v; P99 ratio %.2f\n",
		total, len(members), n, p(explained, 0.5), p(explained, 0.99), p(explained, 1), p(plain, 0.5), p(plain, 0.99),
		float64(framework.Percentile(explained, 0.99))/float64(framework.Percentile(plain, 0.99))))
}
