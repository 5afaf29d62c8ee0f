package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestDryRunPlacement (docs/performance.md, "Drift and explain"): a
// PlacementReview of 100 Deployments (FLOTILLA_BENCH_DRYRUN_TEMPLATES),
// with a PropagationPolicy dividing each over the three members by their
// available replicas and an OverridePolicy for member2, created n times
// one after another (FLOTILLA_BENCH_DRYRUNS, 20): the answer's P50/P99.
// The baseline, alternating with it, is what the review does first for
// each template: a server-side dry-run apply of the 100 Deployments to
// the host, one after another, from the test.
func TestDryRunPlacement(t *testing.T) {
	templates := benchSize("FLOTILLA_BENCH_DRYRUN_TEMPLATES", 100)
	n := benchSize("FLOTILLA_BENCH_DRYRUNS", 20)
	hc, kc := framework.FastClients(t)
	const ns = "bench-dryrun"
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	var deployments [][]byte
	var objects []runtime.RawExtension
	for i := range templates {
		d := []byte(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web-%d","namespace":%q,"labels":{"app":"web-%[1]d"}},
"spec":{"replicas":6,"selector":{"matchLabels":{"app":"web-%[1]d"}},"template":{"metadata":{"labels":{"app":"web-%[1]d"}},
"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{"requests":{"cpu":"10m"}}}]}}}}`, i, ns))
		deployments = append(deployments, d)
		objects = append(objects, runtime.RawExtension{Raw: d})
	}
	objects = append(objects,
		runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"PropagationPolicy","metadata":{"name":"web","namespace":%q},
"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],"placement":{"replicaScheduling":{"replicaSchedulingType":"Divided",
"replicaDivisionPreference":"Weighted","weightPreference":{"dynamicWeight":"AvailableReplicas"}}}}}`, ns))},
		runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"apiVersion":"policy.karmada.io/v1alpha1","kind":"OverridePolicy","metadata":{"name":"web","namespace":%q},
"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment"}],
"overrideRules":[{"targetCluster":{"clusterNames":["member2"]},"overriders":{"labelsOverrider":[{"operator":"add","value":{"canary":"true"}}]}}]}}`, ns))})
	review := func(ctx context.Context) error {
		r, err := kc.FlotillaV1alpha1().PlacementReviews().Create(ctx, &flotillav1alpha1.PlacementReview{Spec: flotillav1alpha1.PlacementReviewSpec{Objects: objects}}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if len(r.Status.Templates) != templates {
			return fmt.Errorf("%d templates reviewed, want %d", len(r.Status.Templates), templates)
		}
		for _, tp := range r.Status.Templates {
			if tp.Result != flotillav1alpha1.ReviewPlaced || len(tp.Clusters) == 0 {
				b, _ := json.Marshal(tp)
				return fmt.Errorf("not placed: %s", b)
			}
		}
		return nil
	}
	dryRunApply := func(ctx context.Context) error {
		for i, d := range deployments {
			if _, err := hc.AppsV1().Deployments(ns).Patch(ctx, fmt.Sprintf("web-%d", i), types.ApplyPatchType, d,
				metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "bench", Force: ptr.To(true)}); err != nil {
				return err
			}
		}
		return nil
	}
	timed := func(f func(context.Context) error) time.Duration {
		start := time.Now()
		if err := f(t.Context()); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	timed(review) // warm: discovery, the interpreter's first read
	var reviews, applies []time.Duration
	for range n {
		applies = append(applies, timed(dryRunApply))
		reviews = append(reviews, timed(review))
	}
	p := func(lat []time.Duration, q float64) time.Duration {
		return framework.Percentile(lat, q).Round(time.Millisecond)
	}
	framework.RecordBench(t, "dryrun.txt", fmt.Sprintf("dry-run placement of %d Deployments (a policy dividing them over 3 members, an override for one), %d reviews one after another: P50 %v, P99 %v; the baseline, %d server-side dry-run applies to the host from the test: P50 %v, P99 %v; P50 ratio %.2f\n",
		templates, n, p(reviews, 0.5), p(reviews, 0.99), templates, p(applies, 0.5), p(applies, 0.99),
		float64(framework.Percentile(reviews, 0.5))/float64(framework.Percentile(applies, 0.5))))
}
