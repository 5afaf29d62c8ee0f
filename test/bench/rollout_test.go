package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// rolloutPolicy propagates the Deployments of ns selected by name (all
// when name is "") to the three members, duplicated, rolled out by
// strategy when it is not "".
func rolloutPolicy(t *testing.T, kc versioned.Interface, ns, strategy string) {
	t.Helper()
	annotations := ""
	if strategy != "" {
		annotations = fmt.Sprintf("\n  annotations: {%s: %s}", flotillav1alpha1.RolloutStrategyAnnotation, strategy)
	}
	framework.Apply(t, fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: rollout
  namespace: %s%s
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns, annotations))
}

// setBenchImage patches the image of Deployment name.
func setBenchImage(ctx context.Context, hc kubernetes.Interface, ns, name, image string) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":%q}]}}}}`, image)
	_, err := hc.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// rolledOut tells whether a member's Deployment runs image, rolled out
// and available.
func rolledOut(d *appsv1.Deployment, image string) bool {
	return d.Spec.Template.Spec.Containers[0].Image == image && d.Status.ObservedGeneration == d.Generation &&
		d.Status.UpdatedReplicas == *d.Spec.Replicas && d.Status.AvailableReplicas == *d.Spec.Replicas
}

// memberTimes follows Deployment name in each member after a change to
// image: when the member first had the image, and when it was rolled out.
type memberTimes struct{ written, done time.Duration }

func followMembers(t *testing.T, mcs map[string]kubernetes.Interface, ns, name, image string, start time.Time) map[string]memberTimes {
	t.Helper()
	out := map[string]memberTimes{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	for m, mc := range mcs {
		wg.Go(func() {
			var mt memberTimes
			for ctx.Err() == nil {
				d, err := mc.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				if err == nil {
					if mt.written == 0 && d.Spec.Template.Spec.Containers[0].Image == image {
						mt.written = time.Since(start)
					}
					if rolledOut(d, image) {
						mt.done = time.Since(start)
						break
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			out[m] = mt
			mu.Unlock()
		})
	}
	wg.Wait()
	for m, mt := range out {
		if mt.done == 0 {
			t.Fatalf("%s/%s in %s not rolled out to %s", ns, name, m, image)
		}
	}
	return out
}

// TestRolloutOverhead: one Deployment changed, rolled out over member1 →
// member2 → member3 as three single-cluster stages without soak, against
// the same change without a strategy (every member at once), alternately.
// The overhead of a stage is the time from the previous member's rollout
// being done to the next member's write (for the first stage: the time to
// the first write beyond the plain change's); writes are the control
// plane's, per change, beyond the plain change's, per cluster.
func TestRolloutOverhead(t *testing.T) {
	hc, kc := framework.FastClients(t)
	mcs := map[string]kubernetes.Interface{}
	for _, m := range benchMembers {
		mcs[m] = memberClient(t, m)
	}
	const plain, staged, reps = "bench-rollout-plain", "bench-rollout-staged", 5
	waitNamespace(t, hc, plain)
	waitNamespace(t, hc, staged)
	framework.Apply(t, `apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: bench-three}
spec:
  stages:
  - {name: s1, clusters: {names: [member1]}}
  - {name: s2, clusters: {names: [member2]}}
  - {name: s3, clusters: {names: [member3]}}
`)
	rolloutPolicy(t, kc, plain, "")
	rolloutPolicy(t, kc, staged, "bench-three")
	for _, ns := range []string{plain, staged} {
		if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), benchDeployment(ns, 0, 2), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		followMembers(t, mcs, ns, "d00000", "nginx:1.7.9", time.Now())
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		rb, err := kc.WorkV1alpha2().ResourceBindings(staged).Get(ctx, names.BindingName("Deployment", "d00000"), metav1.GetOptions{})
		if err != nil || rb.Annotations[flotillav1alpha1.RevisionsAnnotation] == "" {
			return fmt.Sprintf("binding not held yet (%v)", err)
		}
		return ""
	})
	m := newFlotillaMetrics(t)
	// writesBy are the control plane's writes by resource (and
	// subresource); their sum is the total.
	writesBy := func() map[string]float64 {
		out := map[string]float64{}
		for _, s := range m.scrape(t) {
			if slices.Contains(framework.ServedRequests, s.Name) && framework.IsWrite(s.Labels["verb"]) {
				k := s.Labels["resource"]
				if sub := s.Labels["subresource"]; sub != "" {
					k += "/" + sub
				}
				if s.Labels["code"] == "409" {
					k += " (409)"
				}
				out[k] += s.Value
			}
		}
		return out
	}
	sum := func(m map[string]float64) float64 {
		var n float64
		for _, v := range m {
			n += v
		}
		return n
	}
	extra := map[string]float64{}
	writes := writesBy
	var plainTotal, stagedTotal, memberRollout, firstWrite, plainFirstWrite []time.Duration
	var gaps [2][]time.Duration
	var plainWrites, stagedWrites []float64
	for i := range reps {
		image := fmt.Sprintf("nginx:1.%d", 100+i)
		w0 := writes()
		start := time.Now()
		if err := setBenchImage(t.Context(), hc, plain, "d00000", image); err != nil {
			t.Fatal(err)
		}
		p := followMembers(t, mcs, plain, "d00000", image, start)
		time.Sleep(2 * time.Second) // status settles
		w1 := writes()
		start = time.Now()
		if err := setBenchImage(t.Context(), hc, staged, "d00000", image); err != nil {
			t.Fatal(err)
		}
		s := followMembers(t, mcs, staged, "d00000", image, start)
		time.Sleep(2 * time.Second)
		w2 := writes()
		plainWrites, stagedWrites = append(plainWrites, sum(w1)-sum(w0)), append(stagedWrites, sum(w2)-sum(w1))
		for k := range w2 {
			if d := (w2[k] - w1[k]) - (w1[k] - w0[k]); d != 0 {
				extra[k] += d / reps
			}
		}
		var pt, pf time.Duration
		for _, mt := range p {
			pt = max(pt, mt.done)
			memberRollout = append(memberRollout, mt.done-mt.written)
			if pf == 0 || mt.written < pf {
				pf = mt.written
			}
		}
		plainTotal, plainFirstWrite = append(plainTotal, pt), append(plainFirstWrite, pf)
		stagedTotal = append(stagedTotal, s["member3"].done)
		firstWrite = append(firstWrite, s["member1"].written)
		gaps[0] = append(gaps[0], s["member2"].written-s["member1"].done)
		gaps[1] = append(gaps[1], s["member3"].written-s["member2"].done)
	}
	med := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	medf := func(f []float64) float64 {
		f = slices.Clone(f)
		slices.Sort(f)
		return f[len(f)/2]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rollout overhead: one Deployment (2 replicas per member) changed, medians of %d changes each, alternately:\n", reps)
	fmt.Fprintf(&b, "  without a strategy (every member at once): change → last member rolled out %s; change → first member write %s; a member's own rollout %s\n",
		med(plainTotal).Round(time.Millisecond), med(plainFirstWrite).Round(time.Millisecond), med(memberRollout).Round(time.Millisecond))
	fmt.Fprintf(&b, "  three single-cluster stages, no soak: change → member3 rolled out %s (%.2f× the plain change, %.2f× three plain changes)\n",
		med(stagedTotal).Round(time.Millisecond), float64(med(stagedTotal))/float64(med(plainTotal)), float64(med(stagedTotal))/float64(3*med(plainTotal)))
	fmt.Fprintf(&b, "  overhead per stage: stage 1 change → member1 write %s (plain %s, +%s); member1 rolled out → member2 write %s; member2 rolled out → member3 write %s\n",
		med(firstWrite).Round(time.Millisecond), med(plainFirstWrite).Round(time.Millisecond), (med(firstWrite) - med(plainFirstWrite)).Round(time.Millisecond),
		med(gaps[0]).Round(time.Millisecond), med(gaps[1]).Round(time.Millisecond))
	fmt.Fprintf(&b, "  control-plane writes per change: plain %.0f, staged %.0f: %.1f more per cluster\n",
		medf(plainWrites), medf(stagedWrites), (medf(stagedWrites)-medf(plainWrites))/3)
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString("  extra writes per change by resource (mean):")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %+.1f;", k, extra[k])
	}
	b.WriteString("\n")
	record(t, "rollout-overhead.txt", b.String())
}

// TestRolloutScale: 500 Deployments under one policy changed at once,
// first without a strategy, then (the policy naming it) under a strategy
// whose first stage is member1 and second the others: the time until
// member1 runs every change, rolled out, against the time until every run
// passed stage 1. Then the memory one cached revision takes beyond its
// manifest, measured on the revisions the run kept.
func TestRolloutScale(t *testing.T) {
	hc, kc := framework.FastClients(t)
	n := benchSize("FLOTILLA_BENCH_ROLLOUT_TEMPLATES", 500)
	const ns = "bench-rollout-scale"
	waitNamespace(t, hc, ns)
	framework.Apply(t, `apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: bench-two}
spec:
  stages:
  - {name: first, clusters: {names: [member1]}}
  - {name: rest, clusters: {names: [member2, member3]}}
`)
	rolloutPolicy(t, kc, ns, "")
	framework.CreateAll(t, n, 16, func(ctx context.Context, i int) error {
		_, err := hc.AppsV1().Deployments(ns).Create(ctx, benchDeployment(ns, i, 1), metav1.CreateOptions{})
		return err
	})
	m1 := memberClient(t, "member1")
	waitRolledOut := func(mc kubernetes.Interface, image string, timeout time.Duration) time.Duration {
		start := time.Now()
		framework.Eventually(t, timeout, func(ctx context.Context) string {
			list, err := mc.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return err.Error()
			}
			done := 0
			for i := range list.Items {
				if rolledOut(&list.Items[i], image) {
					done++
				}
			}
			if done < n {
				return fmt.Sprintf("%d of %d rolled out to %s", done, n, image)
			}
			return ""
		})
		return time.Since(start)
	}
	for _, mc := range []string{"member1", "member2", "member3"} {
		waitRolledOut(memberClient(t, mc), "nginx:1.7.9", 10*time.Minute)
	}
	change := func(image string) time.Time {
		start := time.Now()
		framework.CreateAll(t, n, 16, func(ctx context.Context, i int) error {
			return setBenchImage(ctx, hc, ns, fmt.Sprintf("d%05d", i), image)
		})
		return start
	}
	// Without a strategy.
	start := change("nginx:2.0")
	waitRolledOut(m1, "nginx:2.0", 10*time.Minute)
	plain := time.Since(start)
	for _, mc := range []string{"member2", "member3"} {
		waitRolledOut(memberClient(t, mc), "nginx:2.0", 10*time.Minute)
	}

	// Under the strategy: every binding held first.
	rolloutPolicy(t, kc, ns, "bench-two")
	framework.Eventually(t, 5*time.Minute, func(ctx context.Context) string {
		list, err := kc.WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		held := 0
		for _, b := range list.Items {
			if b.Annotations[flotillav1alpha1.RevisionsAnnotation] != "" {
				held++
			}
		}
		if held < n {
			return fmt.Sprintf("%d of %d bindings held", held, n)
		}
		return ""
	})
	start = change("nginx:3.0")
	waitRolledOut(m1, "nginx:3.0", 10*time.Minute)
	member1Done := time.Since(start)
	framework.Eventually(t, 10*time.Minute, func(ctx context.Context) string {
		list, err := kc.FlotillaV1alpha1().RolloutRuns(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		passed := 0
		for _, r := range list.Items {
			if len(r.Status.Stages) > 0 && r.Status.Stages[0].Phase == flotillav1alpha1.StageSucceeded {
				passed++
			}
		}
		if passed < n {
			return fmt.Sprintf("%d of %d runs past stage 1", passed, n)
		}
		return ""
	})
	stage1 := time.Since(start)
	for _, mc := range []string{"member2", "member3"} {
		waitRolledOut(memberClient(t, mc), "nginx:3.0", 10*time.Minute)
	}

	// The memory of the kept revisions: decode them as the informer keeps
	// them and weigh the heap, against the manifests' bytes.
	list, err := kc.FlotillaV1alpha1().ResourceRevisions(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	raws := make([][]byte, len(list.Items))
	manifest := 0
	for i := range list.Items {
		if raws[i], err = json.Marshal(&list.Items[i]); err != nil {
			t.Fatal(err)
		}
		manifest += len(list.Items[i].Template.Raw)
	}
	list = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]*flotillav1alpha1.ResourceRevision, len(raws))
	for i, raw := range raws {
		kept[i] = &flotillav1alpha1.ResourceRevision{}
		if err := json.Unmarshal(raw, kept[i]); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perRevision := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(kept))
	// Neither may be collected between the two readings.
	runtime.KeepAlive(kept)
	runtime.KeepAlive(raws)

	var b strings.Builder
	fmt.Fprintf(&b, "rollout scale: %d Deployments (1 replica per member) changed at once (16 writers):\n", n)
	fmt.Fprintf(&b, "  without a strategy: change → member1 runs every change %s\n", plain.Round(time.Millisecond))
	fmt.Fprintf(&b, "  under a strategy (stage 1 member1, stage 2 member2+member3): change → member1 runs every change %s; → every run past stage 1 %s (%.2f× the plain change)\n",
		member1Done.Round(time.Millisecond), stage1.Round(time.Millisecond), float64(stage1)/float64(plain))
	fmt.Fprintf(&b, "  kept revisions: %d (%d per template); cached, each takes %.0f B of heap for a manifest of %.0f B: %.0f B beyond the manifest\n",
		len(kept), len(kept)/n, perRevision, float64(manifest)/float64(len(kept)), perRevision-float64(manifest)/float64(len(kept)))
	record(t, "rollout-scale.txt", b.String())
}
