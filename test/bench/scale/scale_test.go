// Package scale measures Flotilla on the scale bed (docs/performance.md,
// "Scale bed"): twenty trimmed members, each a real kube-apiserver, join
// the control plane; a thousand Deployments go to all of them; the
// figures are the time and the writes that takes, flotilla-apiserver's
// memory per member and per member object, the watches on each member,
// a multi-cluster get and a search over all twenty, and the scheduler's
// decisions per second with twenty clusters, and the scheduler alone over
// the twenty members and over 100 Clusters (the members and aliases of
// their endpoints).
//
// Run with FLOTILLA_BENCH=1 (make bench RUN=TestScaleBed, or
// go test ./test/bench/scale/); FLOTILLA_BENCH_SCALE_TEMPLATES sets the
// number of Deployments (1,000).
package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// members is the size of the bed.
const members = 20

func TestMain(m *testing.M) {
	if os.Getenv("FLOTILLA_BENCH") == "" {
		fmt.Println("bench scale: skipped; set FLOTILLA_BENCH=1 (make bench) to run the benchmarks")
		os.Exit(0)
	}
	// The members join in the test, which measures it.
	framework.Main(m, "bench-scale", env.Options{
		Members:  env.TrimmedMembers(1, members),
		Flotilla: &env.FlotillaOptions{},
	})
}

func templates() int {
	if v, err := strconv.Atoi(os.Getenv("FLOTILLA_BENCH_SCALE_TEMPLATES")); err == nil && v > 0 {
		return v
	}
	return 1000
}

// mib is bytes in MiB.
func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestScaleBed runs its measurements in order, each on what the one
// before left.
func TestScaleBed(t *testing.T) {
	names := make([]string, members)
	for i := range names {
		names[i] = env.MemberName(i + 1)
	}
	flotilla := framework.Env.Host.Process(env.FlotillaComponent)
	rss := func(field string) int64 {
		b, err := env.ProcStatus(flotilla.PID, field)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var report strings.Builder
	say := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		t.Log(line)
		report.WriteString(line + "\n")
	}
	defer func() { framework.RecordBench(t, "scale.txt", report.String()) }()

	alone := rss("VmRSS")
	start := time.Now()
	if err := framework.Env.JoinAll(t.Context(), names); err != nil {
		t.Fatal(err)
	}
	if err := framework.Env.WaitClustersReady(t.Context(), names, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	say("%d members joined and Ready in %.1f s", members, time.Since(start).Seconds())
	time.Sleep(30 * time.Second) // cluster status settles
	joined := rss("VmRSS")
	joinedHeap := heapInUse(t)
	say("flotilla-apiserver resident: %.0f MiB with no member, %.0f MiB with %d idle members: %.1f MiB per member (Go heap in use after a GC: %.0f MiB)",
		mib(alone), mib(joined), members, mib(joined-alone)/members, mib(joinedHeap))

	n := templates()
	ns := framework.Namespace(t, "bench-scale")
	before, err := framework.FlotillaMetrics(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := propagate(t, ns, names, n)
	after, err := framework.FlotillaMetrics(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	objects := n * members
	writes := framework.ControlPlaneWrites(after) - framework.ControlPlaneWrites(before)
	say("%d Deployments, each to all %d members: %d member objects in %.1f s = %.0f objects/s; %.1f control-plane writes per template (%.2f per member object)",
		n, members, objects, elapsed.Seconds(), float64(objects)/elapsed.Seconds(), writes/float64(n), writes/float64(objects))
	time.Sleep(15 * time.Second)
	propagated := rss("VmRSS")
	propagatedHeap := heapInUse(t)
	say("flotilla-apiserver resident: %.0f MiB with the %d member objects (peak %.0f MiB): %.2f KiB per member object above idle; Go heap in use after a GC %.0f MiB: %.2f KiB per member object above idle",
		mib(propagated), objects, mib(rss("VmHWM")), float64(propagated-joined)/1024/float64(objects),
		mib(propagatedHeap), float64(propagatedHeap-joinedHeap)/1024/float64(objects))
	say("watches on each member, by resource: %s", watchesPerMember(t, after))

	say("%s", getPods(t, names))
	say("%s", searchAll(t, ns, names, n))
	say("%s", rescheduleAll(t, ns, n))
	say("%s", schedulerOverClusters(t, names, n))
}

// propagate creates n Deployments in ns and a policy placing them on every
// member, and returns how long until every member holds all of them.
func propagate(t *testing.T, ns string, names []string, n int) time.Duration {
	t.Helper()
	hc, kc := framework.FastClients(t)
	policy := &policyv1alpha1.PropagationPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: ns},
		Spec: policyv1alpha1.PropagationSpec{
			ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
			Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: names}},
		},
	}
	if _, err := kc.PolicyV1alpha1().PropagationPolicies(ns).Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), deployment(ns, i), metav1.CreateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	clients := make([]kubernetes.Interface, len(names))
	for i, m := range names {
		clients[i] = framework.MemberClient(t, m)
	}
	framework.Eventually(t, 20*time.Minute, func(ctx context.Context) string {
		var short []string
		for i, c := range clients {
			if got := count(ctx, c, ns); got < n {
				short = append(short, fmt.Sprintf("%s %d", names[i], got))
			}
		}
		if len(short) > 0 {
			return fmt.Sprintf("Deployments of %d per member: %s", n, strings.Join(short, ", "))
		}
		return ""
	})
	return time.Since(start)
}

// heapInUse is flotilla-apiserver's Go heap in use after a garbage
// collection (its heap profile with gc=1 forces one).
func heapInUse(t *testing.T) int64 {
	t.Helper()
	c := kubernetes.NewForConfigOrDie(framework.FlotillaConfig(t)).CoreV1().RESTClient()
	if _, err := c.Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(t.Context()); err != nil {
		t.Fatalf("flotilla-apiserver's heap profile: %v", err)
	}
	ss, err := framework.FlotillaMetrics(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	return int64(ss.Sum("go_memstats_heap_inuse_bytes", nil))
}

// count is how many Deployments a member holds in ns, from a list of one
// (its remaining count), not a list of all.
func count(ctx context.Context, c kubernetes.Interface, ns string) int {
	l, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return -1
	}
	if l.RemainingItemCount != nil {
		return len(l.Items) + int(*l.RemainingItemCount)
	}
	return len(l.Items)
}

func deployment(ns string, i int) *appsv1.Deployment {
	labels := map[string]string{"app": fmt.Sprintf("d%05d", i)}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%05d", i), Namespace: ns, Labels: map[string]string{"bench": "scale"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			},
		},
	}
}

// watchesPerMember describes flotilla-apiserver's watches on the members:
// the most any member has of each resource, and the total per member.
func watchesPerMember(t *testing.T, ss framework.Samples) string {
	t.Helper()
	most := map[string]float64{}
	perMember := map[string]float64{}
	for _, s := range ss {
		if s.Name != "flotilla_member_watches" {
			continue
		}
		most[s.Labels["resource"]] = max(most[s.Labels["resource"]], s.Value)
		perMember[s.Labels["cluster"]] += s.Value
		if s.Value > 1 {
			t.Errorf("%s: %v watches of %s, want 1", s.Labels["cluster"], s.Value, s.Labels["resource"])
		}
	}
	var parts []string
	for r, v := range most {
		parts = append(parts, fmt.Sprintf("%s %.0f", r, v))
	}
	slices.Sort(parts)
	var totals []float64
	for _, v := range perMember {
		totals = append(totals, v)
	}
	slices.Sort(totals)
	if len(totals) == 0 {
		t.Error("no member watches in flotilla-apiserver's metrics")
		return "none"
	}
	return fmt.Sprintf("at most %s; %.0f to %.0f watches per member in all", strings.Join(parts, ", "), totals[0], totals[len(totals)-1])
}

// getPods puts pods on every member (bound to its kwok node, which runs
// them) and times `flotillactl get pods --operation-scope=members -A`.
func getPods(t *testing.T, names []string) string {
	t.Helper()
	const perMember = 50
	var wg sync.WaitGroup
	for _, m := range names {
		wg.Go(func() {
			c := framework.MemberClient(t, m)
			for i := range perMember {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%03d", i), Namespace: "default"},
					Spec: corev1.PodSpec{NodeName: m + "-kwok-node-0",
						Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
				}
				if _, err := c.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	bin := filepath.Join(framework.Env.Options.BinDir, env.FlotillactlBinary)
	var times []time.Duration
	var lines int
	for range 3 {
		start := time.Now()
		out, err := exec.CommandContext(t.Context(), bin, "get", "pods", "--operation-scope=members", "-A", "--kubeconfig="+framework.Env.Host.Kubeconfig).CombinedOutput()
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatalf("flotillactl get pods: %v\n%s", err, out)
		}
		lines = strings.Count(string(out), "\n") - 1
	}
	if lines < perMember*len(names) {
		t.Errorf("flotillactl get pods listed %d pods, want at least %d", lines, perMember*len(names))
	}
	slices.Sort(times)
	return fmt.Sprintf("flotillactl get pods --operation-scope=members -A over %d members (%d pods): median %v of 3 (%v to %v)",
		len(names), lines, times[1].Round(time.Millisecond), times[0].Round(time.Millisecond), times[2].Round(time.Millisecond))
}

// searchAll caches the Deployments of every member with a
// ResourceRegistry and times a search LIST of them all.
func searchAll(t *testing.T, ns string, names []string, n int) string {
	t.Helper()
	framework.Apply(t, fmt.Sprintf(`apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: bench-scale}
spec:
  targetCluster: {clusterNames: [%s]}
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: %s}]
`, strings.Join(names, ", "), ns))
	t.Cleanup(func() {
		_ = framework.Karmada(t).SearchV1alpha1().ResourceRegistries().Delete(context.Background(), "bench-scale", metav1.DeleteOptions{})
	})
	hc := framework.HostClient(t)
	path := "/apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/namespaces/" + ns + "/deployments"
	want := n * len(names)
	start := time.Now()
	var got int
	list := func(ctx context.Context) (int, error) {
		raw, err := hc.CoreV1().RESTClient().Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return 0, err
		}
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		err = json.Unmarshal(raw, &l)
		return len(l.Items), err
	}
	framework.Eventually(t, 10*time.Minute, func(ctx context.Context) string {
		var err error
		if got, err = list(ctx); err != nil {
			return err.Error()
		}
		if got < want {
			return fmt.Sprintf("search lists %d Deployments, want %d", got, want)
		}
		return ""
	})
	cached := time.Since(start)
	var times []time.Duration
	for range 3 {
		start := time.Now()
		if _, err := list(t.Context()); err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return fmt.Sprintf("search: %d Deployments of %d members cached within %.1f s of the ResourceRegistry; a LIST of all of them: median %v of 3 (%v to %v)",
		want, len(names), cached.Seconds(), times[1].Round(time.Millisecond), times[0].Round(time.Millisecond), times[2].Round(time.Millisecond))
}

// rescheduleAll asks for a fresh scheduling of every binding in ns
// (spec.rescheduleTriggeredAt, as WorkloadRebalancer does) and measures
// how long until the scheduler has run for each: decisions per second
// with twenty clusters, the time to write the triggers included.
func rescheduleAll(t *testing.T, ns string, n int) string {
	t.Helper()
	_, kc := framework.FastClients(t)
	trigger := metav1.NewTime(time.Now().Truncate(time.Second).Add(time.Second))
	time.Sleep(time.Until(trigger.Time))
	start := time.Now()
	patch := fmt.Appendf(nil, `{"spec":{"rescheduleTriggeredAt":%q}}`, trigger.UTC().Format(time.RFC3339))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				name := fmt.Sprintf("d%05d-deployment", i)
				if _, err := kc.WorkV1alpha2().ResourceBindings(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	written := time.Since(start)
	framework.Eventually(t, 10*time.Minute, func(ctx context.Context) string {
		l, err := kc.WorkV1alpha2().ResourceBindings(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		done := 0
		for _, b := range l.Items {
			if b.Status.LastScheduledTime != nil && !b.Status.LastScheduledTime.Before(&trigger) {
				done++
			}
		}
		if done < n {
			return fmt.Sprintf("%d of %d bindings scheduled again", done, n)
		}
		return ""
	})
	elapsed := time.Since(start)
	return fmt.Sprintf("scheduler: %d bindings over %d clusters scheduled again in %.1f s (triggers written in %.1f s): %.0f decisions/s",
		n, members, elapsed.Seconds(), written.Seconds(), float64(n)/elapsed.Seconds())
}
