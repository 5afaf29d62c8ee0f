package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestSchedulerThroughput (figure 9b of docs/performance.md, "Propagation
// pipeline"): scheduling decisions per second over 10,000 bindings, and
// writes per decision. The bindings are written while no scheduler runs;
// then flotilla-apiserver restarts with the scheduler (and cluster status,
// so clusters stay Ready) only, and the PATCHes of resourcebindings are
// counted on its /metrics as decisions land.
func TestSchedulerThroughput(t *testing.T) {
	n := benchSize("FLOTILLA_BENCH_BINDINGS", 10000)
	orig := slices.Clone(framework.Env.Host.Process(env.FlotillaComponent).Args)
	t.Cleanup(func() { framework.RestartFlotilla(context.Background(), t, orig) })
	framework.RestartFlotilla(t.Context(), t, framework.WithControllers("cluster-status"))
	hc, kc := framework.FastClients(t)
	const ns = "bench-scheduler"
	if _, err := hc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	placement := dividingPolicy(ns).Spec.Placement
	framework.CreateAll(t, n, 16, func(ctx context.Context, i int) error {
		name := fmt.Sprintf("d%05d", i)
		_, err := kc.WorkV1alpha2().ResourceBindings(ns).Create(ctx, &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-deployment", Namespace: ns},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name,
					UID: types.UID(strconv.Itoa(i))},
				Replicas: 3, Placement: placement.DeepCopy(), SchedulerName: "default-scheduler",
			},
		}, metav1.CreateOptions{})
		return err
	})
	t.Cleanup(func() {
		_ = kc.WorkV1alpha2().ResourceBindings(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{})
		_ = hc.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})

	m := newFlotillaMetrics(t)
	// A decision is one write: through the scheduling subresource when
	// the result changes, the status subresource when only the status
	// does. Its successful writes mark progress. Every attempt on the
	// binding or a subresource counts as a write per decision, conflicts
	// included.
	decisionWrites := func(ss framework.Samples) float64 {
		return framework.Served(ss, func(l map[string]string) bool {
			sub := l["subresource"]
			return l["resource"] == "resourcebindings" && (sub == "status" || sub == workv1alpha2.SchedulingSubresource) &&
				framework.IsWrite(l["verb"]) && strings.HasPrefix(l["code"], "2")
		})
	}
	rbWrites := func(ss framework.Samples) float64 {
		return framework.Served(ss, func(l map[string]string) bool {
			return l["resource"] == "resourcebindings" && framework.IsWrite(l["verb"]) && strings.HasPrefix(l["code"], "2")
		})
	}
	rbAttempts := func(ss framework.Samples) float64 {
		return framework.Served(ss, func(l map[string]string) bool {
			return l["resource"] == "resourcebindings" && framework.IsWrite(l["verb"])
		})
	}
	restarted := time.Now()
	framework.RestartFlotilla(t.Context(), t, framework.WithControllers("cluster-status,scheduler"))
	var first, done time.Time
	for done.IsZero() {
		if time.Since(restarted) > 10*time.Minute {
			t.Fatal("the scheduler did not decide every binding in 10 minutes")
		}
		w := decisionWrites(m.scrape(t))
		now := time.Now()
		if w > 0 && first.IsZero() {
			first = now
		}
		if w >= float64(n) {
			done = now
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // late writes count too
	last := m.scrape(t)
	writes, attempts := rbWrites(last), rbAttempts(last)
	list, err := kc.WorkV1alpha2().ResourceBindings(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scheduled := 0
	for _, b := range list.Items {
		if len(b.Spec.Clusters) == 3 && b.Status.SchedulerObservedGeneration == b.Generation {
			scheduled++
		}
	}
	if scheduled != n {
		t.Errorf("%d of %d bindings scheduled on 3 clusters", scheduled, n)
	}
	busy := done.Sub(first).Seconds()
	record(t, "scheduler.txt", fmt.Sprintf(`scheduler (9b): %d bindings, Divided over 3 clusters
  decisions/s while deciding (first to last write)  %.0f   (%.1f s)
  decisions/s from restart (incl. start, lease, cache sync)  %.0f   (%.1f s)
  binding writes  %.0f  = %.3f per decision (%.0f attempts, conflicts included: %.3f per decision)
`, n, float64(n)/max(busy, 0.1), busy, float64(n)/done.Sub(restarted).Seconds(), done.Sub(restarted).Seconds(),
		writes, writes/float64(n), attempts, attempts/float64(n)))
}

// TestTemplateToMemberLatency (figure 9d of docs/performance.md): template
// → member object latency while 50 new templates arrive per second, each
// divided over the three members.
func TestTemplateToMemberLatency(t *testing.T) {
	pauseMembers(t)
	rates := []int{10, 20, 50}
	if v := os.Getenv("FLOTILLA_BENCH_LATENCY_RATES"); v != "" {
		rates = nil
		for _, f := range strings.Split(v, ",") {
			r, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || r <= 0 {
				t.Fatalf("FLOTILLA_BENCH_LATENCY_RATES: %q is not a rate", f)
			}
			rates = append(rates, r)
		}
	}
	seconds := benchSize("FLOTILLA_BENCH_LATENCY_SECONDS", 30)
	hc, kc := framework.FastClients(t)
	var out strings.Builder
	for _, perSecond := range rates {
		out.WriteString(measureLatency(t, hc, kc, perSecond, seconds))
	}
	record(t, "latency.txt", out.String())
}

// measureLatency creates perSecond templates a second for seconds in a
// namespace of its own, and describes the time from each create to its
// member objects.
func measureLatency(t *testing.T, hc kubernetes.Interface, kc versioned.Interface, perSecond, seconds int) string {
	t.Helper()
	total := perSecond * seconds
	ns := fmt.Sprintf("bench-latency-%d", perSecond)
	counters := prepareNamespace(t, hc, kc, ns)
	before := newFlotillaMetrics(t).scrape(t)
	sent := make([]time.Time, total)
	errs := make(chan error, total)
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	for i := range total {
		<-tick.C
		sent[i] = time.Now()
		go func() {
			if _, err := hc.AppsV1().Deployments(ns).Create(t.Context(), benchDeployment(ns, i, 3), metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		}()
	}
	tick.Stop()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		all := true
		for _, c := range counters {
			all = all && c.count() >= total
		}
		if all {
			break
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("not every template reached every member in 3 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var each, slowest []time.Duration
	for i := range total {
		var worst time.Duration
		for _, c := range counters {
			at, _ := c.at(fmt.Sprintf("d%05d", i))
			d := at.Sub(sent[i])
			each = append(each, d)
			worst = max(worst, d)
		}
		slowest = append(slowest, worst)
	}
	round := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf(`template -> member latency (9d): %d templates at %d/s, each divided over 3 members
  per member object   p50 %v  p99 %v  max %v
  last of the three   p50 %v  p99 %v  max %v
%s`, total, perSecond, round(percentile(each, .5)), round(percentile(each, .99)), round(percentile(each, 1)),
		round(percentile(slowest, .5)), round(percentile(slowest, .99)), round(percentile(slowest, 1)),
		queueSummary(queueDelta(before, newFlotillaMetrics(t).scrape(t))))
}

// TestPropagationThroughput (figures 9a and 9c of docs/performance.md):
// 5,000 Deployments divided over three members, cold, against a plain
// client creating the same 15,000 objects directly in the members; then a
// restart of flotilla-apiserver with all of them propagated: time until its
// queues are idle, and the writes it issued.
func TestPropagationThroughput(t *testing.T) {
	pauseMembers(t)
	n := benchSize("FLOTILLA_BENCH_TEMPLATES", 5000)
	hc, kc := framework.FastClients(t)

	// The physical limit: 3n Deployments created directly in the members.
	const direct = "bench-direct"
	var mcs []kubernetes.Interface
	for _, m := range benchMembers {
		mc := memberClient(t, m)
		mcs = append(mcs, mc)
		if _, err := mc.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: direct}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cpuDirect := takeCPU(t)
	start := time.Now()
	framework.CreateAll(t, 3*n, 48, func(ctx context.Context, i int) error {
		_, err := mcs[i%3].AppsV1().Deployments(direct).Create(ctx, benchDeployment(direct, i/3, 1), metav1.CreateOptions{})
		return err
	})
	directTime := time.Since(start)
	directCPU, directTotal := takeCPU(t).since(cpuDirect)

	const ns = "bench-propagation"
	counters := prepareNamespace(t, hc, kc, ns)
	m := newFlotillaMetrics(t)
	memberHosts := map[string]bool{}
	for _, name := range benchMembers {
		memberHosts["127.0.0.1:"+strconv.Itoa(framework.Member(t, name).Ports.APIServer)] = true
	}
	memberWrites := func(ss framework.Samples) float64 {
		return ss.Sum("rest_client_requests_total", func(l map[string]string) bool { return memberHosts[l["host"]] && framework.IsWrite(l["method"]) })
	}
	cpWrites := func(ss framework.Samples) float64 {
		return framework.Served(ss, func(l map[string]string) bool { return framework.IsWrite(l["verb"]) })
	}
	conflicts := func(ss framework.Samples) float64 {
		return framework.Served(ss, func(l map[string]string) bool { return l["code"] == "409" })
	}
	before := m.scrape(t)
	eventsBefore, templatesBefore := hostWrites(t, hc, "events"), hostWrites(t, hc, "deployments")
	m.profile(t, "propagation.pprof", 30)
	profileAPIServer(t, hc, "propagation-host-apiserver.pprof", 30)
	profileAPIServer(t, mcs[0], "propagation-member1-apiserver.pprof", 30)
	cpuFlotilla := takeCPU(t)
	start = time.Now()
	framework.CreateAll(t, n, 16, func(ctx context.Context, i int) error {
		_, err := hc.AppsV1().Deployments(ns).Create(ctx, benchDeployment(ns, i, 3), metav1.CreateOptions{})
		return err
	})
	created := time.Since(start)
	for {
		all := true
		for _, c := range counters {
			all = all && c.count() >= n
		}
		if all {
			break
		}
		if time.Since(start) > 30*time.Minute {
			t.Fatalf("after 30 minutes the members hold %d, %d, %d of %d", counters[0].count(), counters[1].count(), counters[2].count(), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	propagated := time.Since(start)
	// Status and aggregation still settle after the last member object.
	idleAt, after := waitIdle(t, m, n)
	flotillaCPU, flotillaTotal := takeCPU(t).since(cpuFlotilla)
	events := hostWrites(t, hc, "events") - eventsBefore
	templateWrites := hostWrites(t, hc, "deployments") - templatesBefore
	ratio := directTime.Seconds() / propagated.Seconds()
	// Before 9c restarts flotilla-apiserver (a new process, a new peak).
	rss, rssDetail := controlPlanePeakRSS(t)
	heap := m.heapProfile(t, "propagation-heap.pprof")
	record(t, "propagation.txt", fmt.Sprintf(`propagation (9a): %d Deployments divided over 3 members (member controllers paused)
  direct: %d objects created in the members by a plain client   %.1f s   %.0f objects/s
  flotilla: templates created in %.1f s; every member object existed after %.1f s   %.0f objects/s
  ratio flotilla/direct  %.2f   (goal >= 0.8)
  CPU (user and system) of the bed's processes: direct %.1f s = %.2f ms per member object (%s)
    flotilla until idle %.1f s = %.2f ms per member object (%s)
    CPU ratio direct/flotilla per member object  %.3f
  idle %.1f s after the first template
  control-plane writes %.0f (%.1f per template), 409 conflicts %.0f, member writes %.0f (%.2f per member object)
  host: template (Deployment) writes %.0f (%.2f per template), event writes %.0f (%.1f per template, %.0f/s until idle)
  control plane peak RSS (sum of each process's VmHWM) %.0f MiB = %.2f of Karmada's 2.6 GiB for six components (goal <= 0.5): %s
  flotilla-apiserver after 9a: %s
%s  requests:
%s`, n, 3*n, directTime.Seconds(), float64(3*n)/directTime.Seconds(), created.Seconds(), propagated.Seconds(),
		float64(3*n)/propagated.Seconds(), ratio,
		directTotal.Seconds(), 1000*directTotal.Seconds()/float64(3*n), directCPU,
		flotillaTotal.Seconds(), 1000*flotillaTotal.Seconds()/float64(3*n), flotillaCPU, directTotal.Seconds()/flotillaTotal.Seconds(),
		idleAt.Sub(start).Seconds(),
		cpWrites(after)-cpWrites(before), (cpWrites(after)-cpWrites(before))/float64(n), conflicts(after)-conflicts(before),
		memberWrites(after)-memberWrites(before), (memberWrites(after)-memberWrites(before))/float64(3*n),
		templateWrites, templateWrites/float64(n), events, events/float64(n), events/idleAt.Sub(start).Seconds(),
		float64(rss)/(1<<20), float64(rss)/(2.6*(1<<30)), rssDetail, heap,
		queueSummary(queueDelta(before, after)), writeBreakdown(before, after, float64(n))))

	// 9c: restart with everything propagated.
	restartStart := time.Now()
	framework.RestartFlotilla(t.Context(), t, nil)
	idleAt, after = waitIdle(t, m, n)
	record(t, "restart.txt", fmt.Sprintf(`restart (9c): flotilla-apiserver restarted with %d templates propagated (%d member objects, %d Works)
  idle after %.1f s (goal <= 60 s)
  member writes %.0f (goal 0), control-plane writes %.0f, 409 conflicts %.0f
`, n, 3*n, 3*n, idleAt.Sub(restartStart).Seconds(), memberWrites(after), cpWrites(after), conflicts(after)))
}

// waitIdle waits until flotilla-apiserver's controllers have taken in at
// least n bindings and every queue has stayed empty, with no new adds, for
// two seconds; it returns when that quiet time began and the last scrape.
func waitIdle(t *testing.T, m *flotillaMetrics, n int) (time.Time, framework.Samples) {
	t.Helper()
	var quietSince time.Time
	var lastAdds float64 = -1
	var lastScrape framework.Samples
	var lastBusy string
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		ss := m.scrape(t)
		now := time.Now()
		if ss == nil {
			time.Sleep(250 * time.Millisecond)
			continue
		}
		adds := ss.Sum("workqueue_adds_total", nil)
		depth := ss.Sum("workqueue_depth", nil)
		taken := ss.Sum("workqueue_adds_total", func(l map[string]string) bool { return l["name"] == "binding" })
		if taken < float64(n) || depth > 0 || adds != lastAdds {
			if busy := busyQueues(ss, lastScrape); busy != "" {
				lastBusy = fmt.Sprintf("%s at %s", busy, now.Format("15:04:05.0"))
			}
			quietSince, lastAdds = time.Time{}, adds
		} else if quietSince.IsZero() {
			quietSince = now
		} else if now.Sub(quietSince) >= 2*time.Second {
			t.Logf("idle at %s; the last busy queues: %s", quietSince.Format("15:04:05.0"), lastBusy)
			return quietSince, ss
		}
		lastScrape = ss
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatal("flotilla-apiserver's controllers were not idle in 30 minutes")
	return time.Time{}, nil
}

// busyQueues names the queues with keys waiting in ss or keys added since
// prev, with their depth and adds.
func busyQueues(ss, prev framework.Samples) string {
	var busy []string
	for _, s := range ss {
		if s.Name != "workqueue_depth" {
			continue
		}
		name := s.Labels["name"]
		of := func(l map[string]string) bool { return l["name"] == name }
		added := ss.Sum("workqueue_adds_total", of) - prev.Sum("workqueue_adds_total", of)
		if s.Value > 0 || (prev != nil && added > 0) {
			busy = append(busy, fmt.Sprintf("%s (depth %.0f, %.0f added)", name, s.Value, added))
		}
	}
	slices.Sort(busy)
	return strings.Join(busy, ", ")
}

// prepareNamespace creates ns on the host (propagated to every member), the
// policy dividing its Deployments over the members, and a counter of the
// Deployments arriving in each member.
func prepareNamespace(t *testing.T, hc kubernetes.Interface, kc versioned.Interface, ns string) []*counter {
	t.Helper()
	waitNamespace(t, hc, ns)
	if _, err := kc.PolicyV1alpha1().PropagationPolicies(ns).Create(t.Context(), dividingPolicy(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var counters []*counter
	for _, m := range benchMembers {
		counters = append(counters, countDeployments(t, memberClient(t, m), ns))
	}
	return counters
}
