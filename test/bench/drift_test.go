package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestDriftNoticed (docs/performance.md, "Drift and explain"): a
// Deployment propagated to member2 has its image changed in member2, one
// edit at a time, n times (FLOTILLA_BENCH_DRIFT_EDITS, 200). For each,
// the time from the edit to member2's Work reporting it (a watch of the
// Work: its manifestStatuses[0].drift naming the edited value), and the
// control-plane writes flotilla-apiserver served per edit.
func TestDriftNoticed(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_DRIFT_EDITS", 200)
	hc, kc := framework.FastClients(t)
	const ns = "bench-drift"
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}}}},
	}
	if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pp := &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
		}}
	if _, err := kc.PolicyV1alpha1().PropagationPolicies(ns).Create(t.Context(), pp, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	works := kc.WorkV1alpha1().Works(names.ExecutionNamespace("member2"))
	workName := names.WorkName("Deployment", "web", ns)
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		w, err := works.Get(ctx, workName, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied); c == nil || c.Status != metav1.ConditionTrue {
			return "the Work is not applied yet"
		}
		if len(w.Status.ManifestStatuses) == 0 || w.Status.ManifestStatuses[0].Health != workv1alpha1.ResourceHealthy {
			return "the member Deployment is not healthy yet"
		}
		return ""
	})
	// Its pod's readiness has reached the Work and the binding: the writes
	// counted from here are the edits'.
	time.Sleep(3 * time.Second)
	m2 := memberClient(t, "member2")
	w, err := works.Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + workName})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	seen := make(chan string, 16)
	go func() {
		defer close(seen)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified {
				continue
			}
			work, ok := ev.Object.(*workv1alpha1.Work)
			if !ok || len(work.Status.ManifestStatuses) == 0 {
				continue
			}
			for _, f := range work.Status.ManifestStatuses[0].Drift {
				seen <- f.ValueInMember
			}
		}
	}()

	m := newFlotillaMetrics(t)
	first := m.scrape(t)
	before := framework.ControlPlaneWrites(first)
	var lat []time.Duration
	for i := range n {
		image := fmt.Sprintf(`"nginx:edit-%d"`, i)
		body := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%s}]}}}}`, image)
		start := time.Now()
		if _, err := m2.AppsV1().Deployments(ns).Patch(t.Context(), "web", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(time.Minute)
	wait:
		for {
			select {
			case v, ok := <-seen:
				if !ok {
					t.Fatal("the Work watch ended")
				}
				if v == image {
					lat = append(lat, time.Since(start))
					break wait
				}
			case <-deadline:
				t.Fatalf("edit %d: not reported in a minute", i)
			}
		}
	}
	time.Sleep(3 * time.Second) // the last edit's writes land
	last := m.scrape(t)
	writes := framework.ControlPlaneWrites(last) - before
	// Which writes: by resource and subresource.
	by := func(ss framework.Samples, resource, sub string) float64 {
		return framework.Served(ss, func(l map[string]string) bool {
			return l["resource"] == resource && l["subresource"] == sub && framework.IsWrite(l["verb"])
		})
	}
	var split []string
	// The clusters' own status heartbeats fall in the window too.
	for _, rs := range [][2]string{{"works", "status"}, {"works", ""}, {"resourcebindings", "status"}, {"resourcebindings", ""}, {"clusters", "status"}, {"clusters", ""}} {
		if d := by(last, rs[0], rs[1]) - by(first, rs[0], rs[1]); d > 0 {
			name := rs[0]
			if rs[1] != "" {
				name += "/" + rs[1]
			}
			split = append(split, fmt.Sprintf("%s %.2f", name, d/float64(n)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "drift noticed (member edit to the Work's report), %d edits one at a time: P50 %v, P90 %v, P99 %v, max %v; control-plane writes per edit %.2f (%s)\n",
		n, framework.Percentile(lat, 0.5).Round(time.Millisecond), framework.Percentile(lat, 0.9).Round(time.Millisecond),
		framework.Percentile(lat, 0.99).Round(time.Millisecond), framework.Percentile(lat, 1).Round(time.Millisecond), writes/float64(n), strings.Join(split, ", "))
	framework.RecordBench(t, "drift.txt", b.String())
}
