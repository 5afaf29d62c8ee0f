// Package search benchmarks the multi-cluster cache behind search.karmada.io:
// 100,000 pods over three members, created directly in them.
// Every figure is a ratio or an absolute taken in one run against a
// baseline measured in the same run. It runs with `make bench`, in its own
// environment so its pods do not weigh on the other benchmarks.
package search

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

var members = []string{"member1", "member2", "member3"}

func TestMain(m *testing.M) {
	if os.Getenv("FLOTILLA_BENCH") == "" {
		fmt.Println("bench/search: skipped; set FLOTILLA_BENCH=1 (make bench) to run the benchmarks")
		os.Exit(0)
	}
	framework.Main(m, "bench-search", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		// The first phase measures the cache alone.
		Flotilla: &env.FlotillaOptions{Args: []string{"--search-index=false"}},
	}, members...)
}

// totalPods is how many pods the benchmark caches (FLOTILLA_BENCH_PODS).
func totalPods() int {
	if n, err := strconv.Atoi(os.Getenv("FLOTILLA_BENCH_PODS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// bigNamespace holds 10,000 pods in member1 (or a tenth of the total).
const bigNamespace = "big"

func record(t *testing.T, text string) { t.Helper(); framework.RecordBench(t, "search.txt", text) }

func percentile(d []time.Duration, p float64) time.Duration { return framework.Percentile(d, p) }

func config(t *testing.T, c *env.Cluster) *rest.Config {
	t.Helper()
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 5000, 5000
	return cfg
}

func TestSearchCache(t *testing.T) {
	ctx := t.Context()
	n := totalPods()
	big := min(10_000, n/10)
	host := config(t, framework.Env.Host)
	k := versioned.NewForConfigOrDie(host)
	memberCS := map[string]kubernetes.Interface{}
	for _, m := range members {
		memberCS[m] = kubernetes.NewForConfigOrDie(config(t, framework.Member(t, m)))
		ensureNamespaces(t, memberCS[m], bigNamespace, "ns-0", "ns-1", "ns-2", "ns-3", "ns-4", "ns-5", "ns-6", "ns-7", "ns-8", "ns-9", "lag")
	}
	// The pods, created directly in the members: member1 holds the big
	// namespace, the rest is spread evenly.
	start := time.Now()
	createPods(t, memberCS["member1"], big, 0, bigNamespace)
	rest := n - big
	for i, m := range members {
		share := rest / len(members)
		if i == 0 {
			share += rest % len(members)
		}
		createPods(t, memberCS[m], share, big+i*rest, "")
	}
	created := time.Since(start)
	record(t, fmt.Sprintf("\n== search cache benchmark, %s: %d pods over %s (%d in %s/%s), created in %.1f s\n",
		time.Now().UTC().Format(time.RFC3339), n, strings.Join(members, ", "), big, "member1", bigNamespace, created.Seconds()))

	// a. memory per cached pod, cache alone (this server runs with
	// --search-index=false): the registry is created, and once everything
	// is cached it is deleted. Both after a bulk first list and after big
	// stores stop, the server hands freed memory back to the system, so
	// the two resident sizes compare like with like.
	waitQuiet(t, time.Minute)
	reg := &searchv1alpha1.ResourceRegistry{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Spec: searchv1alpha1.ResourceRegistrySpec{
		TargetCluster:     policyv1alpha1.ClusterAffinity{ClusterNames: members},
		ResourceSelectors: []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Pod"}},
	}}
	start = time.Now()
	createRegistry(t, k, reg)
	cacheFill := time.Since(start)
	cached, cachedHeap := settledRSS(t, 20*time.Second), liveHeap(t)
	deleteRegistry(t, k, host)
	empty, emptyHeap := settledRSS(t, 20*time.Second), liveHeap(t)
	livePerPod := float64(cachedHeap-emptyHeap) / float64(n)
	record(t, fmt.Sprintf("a. cache alone: RSS %.0f MiB with %d pods cached, %.0f MiB once the registry is deleted: %.0f bytes per pod (goal ≤ 4096; Karmada ≈ 70 KB); "+
		"live heap after a forced GC %.0f → %.0f MiB: %.0f bytes per pod\n",
		mib(cached), n, mib(empty), float64(cached-empty)/float64(n), mib(cachedHeap), mib(emptyHeap), livePerPod))
	record(t, fmt.Sprintf("c. empty to fully cached (registry created → Ready): %.1f s, %.0f pods/s\n", cacheFill.Seconds(), float64(n)/cacheFill.Seconds()))
	createRegistry(t, k, reg)

	// b. LIST of the 10,000-pod namespace, once the machine is quiet again: directly from member1, through
	// search/cache and through proxying, interleaved.
	m1 := config(t, framework.Member(t, "member1"))
	direct, viaHost := httpClient(t, m1), httpClient(t, host)
	paths := map[string]string{
		"direct":       m1.Host + "/api/v1/namespaces/" + bigNamespace + "/pods",
		"search/cache": host.Host + "/apis/search.karmada.io/v1alpha1/search/cache/api/v1/namespaces/" + bigNamespace + "/pods",
		"proxying":     host.Host + "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/api/v1/namespaces/" + bigNamespace + "/pods",
	}
	lat := map[string][]time.Duration{}
	sizes := map[string]int{}
	waitQuiet(t, 2*time.Minute)
	const reps = 30
	for i := range reps + 3 {
		for _, name := range []string{"direct", "search/cache", "proxying"} {
			c := viaHost
			if name == "direct" {
				c = direct
			}
			d, size := getJSON(t, c, paths[name])
			if i >= 3 { // warm-up
				lat[name] = append(lat[name], d)
				sizes[name] = size
			}
		}
	}
	for _, name := range []string{"search/cache", "proxying"} {
		record(t, fmt.Sprintf("b. LIST %d pods (%s, %.1f MB JSON) p50 %v p99 %v; direct from member1 p50 %v p99 %v; ratio p50 %.2f p99 %.2f (goal p99 ≤ 300ms, ratio ≤ 1.5)\n",
			big, name, float64(sizes[name])/1e6, percentile(lat[name], .5).Round(time.Millisecond), percentile(lat[name], .99).Round(time.Millisecond),
			percentile(lat["direct"], .5).Round(time.Millisecond), percentile(lat["direct"], .99).Round(time.Millisecond),
			float64(percentile(lat[name], .5))/float64(percentile(lat["direct"], .5)), float64(percentile(lat[name], .99))/float64(percentile(lat["direct"], .99))))
	}

	// c. watch event lag through proxying against a direct member watch.
	watchLag(t, memberCS["member2"], host)

	// Phase 2: the same server with the full-text index (on disk under its
	// data directory, the default), restarted: the cache and the index are
	// rebuilt from the members.
	p := framework.Env.Host.Process(env.FlotillaComponent)
	p.Stop(5 * time.Second)
	p.Args = slices.DeleteFunc(p.Args, func(a string) bool { return a == "--search-index=false" })
	start = time.Now()
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		return indexed(t, viaHost, host.Host) >= n, nil
	})
	if err != nil {
		t.Fatalf("the index did not reach %d pods: %v", n, err)
	}
	indexBuild := time.Since(start)
	withIndex, indexHeap := settledRSS(t, 20*time.Second), liveHeap(t)
	deleteRegistry(t, k, host)
	emptyAgain, emptyAgainHeap := settledRSS(t, 20*time.Second), liveHeap(t)
	record(t, fmt.Sprintf("a. cache and index: RSS %.0f MiB with %d pods cached and indexed, %.0f MiB once the registry is deleted: %.0f bytes per pod; "+
		"live heap %.0f → %.0f MiB: %.0f bytes per pod (the index's segments are files, mapped)\n",
		mib(withIndex), n, mib(emptyAgain), float64(withIndex-emptyAgain)/float64(n), mib(indexHeap), mib(emptyAgainHeap), float64(indexHeap-emptyAgainHeap)/float64(n)))
	record(t, fmt.Sprintf("c. restart to fully indexed: %.1f s, %.0f pods/s indexed\n", indexBuild.Seconds(), float64(n)/indexBuild.Seconds()))

	createRegistry(t, k, reg)
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		return indexed(t, viaHost, host.Host) >= n, nil
	})
	if err != nil {
		t.Fatalf("the index did not reach %d pods again: %v", n, err)
	}

	// d. query latency through search/fulltext (size 50, objects included).
	queries := []string{"image:nginx* cluster:member1 kind:Pod", `label:"tier=web" namespace:ns-3`, "app-7", "labels.app:app-13 -cluster:member2"}
	var ql []time.Duration
	for i := range 400 {
		q := queries[i%len(queries)]
		d, _ := getJSON(t, viaHost, host.Host+"/apis/search.karmada.io/v1alpha1/search/fulltext?size=50&q="+urlQuery(q))
		if i >= 20 {
			ql = append(ql, d)
		}
	}
	record(t, fmt.Sprintf("d. search/fulltext over %d pods (%d queries of %q, 50 objects per answer): p50 %v p99 %v (goal p99 ≤ 50ms)\n",
		n, len(ql), queries, percentile(ql, .5).Round(100*time.Microsecond), percentile(ql, .99).Round(100*time.Microsecond)))
}

// waitQuiet waits until the one-minute load average is below 1.5 (the
// members settle after a bulk load), at most max.
func waitQuiet(t *testing.T, max time.Duration) {
	t.Helper()
	for end := time.Now().Add(max); time.Now().Before(end); time.Sleep(2 * time.Second) {
		raw, err := os.ReadFile("/proc/loadavg")
		if err != nil {
			return
		}
		if f := strings.Fields(string(raw)); len(f) > 0 {
			if l, _ := strconv.ParseFloat(f[0], 64); l < 1.5 {
				return
			}
		}
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// indexed is how many pods the full-text index finds.
func indexed(t *testing.T, c *http.Client, host string) int {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, host+"/apis/search.karmada.io/v1alpha1/search/fulltext?size=1&q=kind:Pod", nil)
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	var out struct{ Total int }
	if resp.StatusCode != http.StatusOK || json.NewDecoder(bufio.NewReader(resp.Body)).Decode(&out) != nil {
		return 0
	}
	return out.Total
}

// watchLag creates pods in member2's "lag" namespace at a steady pace
// while a direct watch and a proxying watch are open, and compares when
// each saw them.
func watchLag(t *testing.T, m2 kubernetes.Interface, host *rest.Config) {
	t.Helper()
	ctx := t.Context()
	cfg := rest.CopyConfig(host)
	cfg.Host += "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy"
	proxied := kubernetes.NewForConfigOrDie(cfg)
	dw, err := m2.CoreV1().Pods("lag").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer dw.Stop()
	l, err := proxied.CoreV1().Pods("lag").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pw, err := proxied.CoreV1().Pods("lag").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	const n = 300
	created := make([]time.Time, n)
	var mu sync.Mutex
	collect := func(w watch.Interface, out chan<- []time.Duration) {
		var lags []time.Duration
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type != watch.Added {
				continue
			}
			var i int
			if _, err := fmt.Sscanf(p.Name[strings.LastIndex(p.Name, "-")+1:], "%d", &i); err != nil || i < 1_000_000_000 {
				continue
			}
			i -= 1_000_000_000
			mu.Lock()
			lags = append(lags, time.Since(created[i]))
			mu.Unlock()
			if len(lags) == n {
				break
			}
		}
		out <- lags
	}
	dres, pres := make(chan []time.Duration, 1), make(chan []time.Duration, 1)
	go collect(dw, dres)
	go collect(pw, pres)
	tick := time.NewTicker(20 * time.Millisecond) // 50 pods/s
	defer tick.Stop()
	for i := range n {
		<-tick.C
		mu.Lock()
		created[i] = time.Now()
		mu.Unlock()
		p := pod("lag", 0)
		p.Name = fmt.Sprintf("lag-%d", 1_000_000_000+i)
		if _, err := m2.CoreV1().Pods("lag").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var d, p []time.Duration
	for _, c := range []struct {
		ch  chan []time.Duration
		out *[]time.Duration
	}{{dres, &d}, {pres, &p}} {
		select {
		case *c.out = <-c.ch:
		case <-time.After(2 * time.Minute):
			t.Fatal("a watch missed events")
		}
	}
	record(t, fmt.Sprintf("c. watch lag (%d pods at 50/s in member2): direct p50 %v p99 %v; through proxying p50 %v p99 %v; ratio p50 %.2f p99 %.2f\n",
		n, percentile(d, .5).Round(100*time.Microsecond), percentile(d, .99).Round(100*time.Microsecond),
		percentile(p, .5).Round(100*time.Microsecond), percentile(p, .99).Round(100*time.Microsecond),
		float64(percentile(p, .5))/float64(percentile(d, .5)), float64(percentile(p, .99))/float64(percentile(d, .99))))
}
