package index

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// benchPods is the number of pods BenchmarkSearch indexes:
// FLOTILLA_INDEX_BENCH_PODS, default 20000.
func benchPods(b *testing.B) int {
	if s := os.Getenv("FLOTILLA_INDEX_BENCH_PODS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("FLOTILLA_INDEX_BENCH_PODS=%q: want a positive integer", s)
		}
		return n
	}
	return 20000
}

// benchDir is "" (in memory) unless FLOTILLA_INDEX_BENCH_DISK is set, in which
// case the index lives in a temporary directory.
func benchDir(b *testing.B) string {
	if os.Getenv("FLOTILLA_INDEX_BENCH_DISK") != "" {
		return b.TempDir()
	}
	return ""
}

// BenchmarkPut measures the indexing rate of kwok-like pods, from Put to
// searchable, over 3 clusters.
func BenchmarkPut(b *testing.B) {
	_, obj := kwokPod("member1", 1)
	raw, err := json.Marshal(obj)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(raw)), "json-bytes/pod")

	ix := openTest(b, Options{Dir: benchDir(b)})
	keys := make([]Key, 0, 4096)
	objs := make([]map[string]interface{}, 0, 4096)
	for i := range 4096 {
		k, o := kwokPod("member"+strconv.Itoa(i%3), i)
		keys = append(keys, k)
		objs = append(objs, o)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		k := keys[i%len(keys)]
		k.Name = "pod-" + strconv.Itoa(i)
		ix.Put(k, objs[i%len(objs)])
	}
	mustFlush(b, ix)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "docs/s")
}

// buildBenchIndex indexes n pods over 3 clusters and reports the heap it
// takes per document.
func buildBenchIndex(b *testing.B, n int) *Index {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	ix := openTest(b, Options{Dir: benchDir(b)})
	start := time.Now()
	for i := range n {
		k, o := kwokPod("member"+strconv.Itoa(i%3+1), i)
		ix.Put(k, o)
	}
	mustFlush(b, ix)
	build := time.Since(start)
	// Let the persister move the last segments out of the heap.
	time.Sleep(2 * time.Second)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	s := ix.Stats()
	b.Logf("built %d pods in %v: %.0f docs/s, %.0f heap bytes/doc, %.0f disk bytes/doc, %d segments", n, build.Round(time.Millisecond),
		float64(n)/build.Seconds(), float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(n),
		float64(s.DiskBytes)/float64(n), s.Segments)
	return ix
}

// BenchmarkSearch measures query latency on an index of benchPods pods and
// reports p50 and p99 per query.
func BenchmarkSearch(b *testing.B) {
	n := benchPods(b)
	ix := buildBenchIndex(b, n)
	ctx := context.Background()
	queries := []struct {
		name string
		req  Request
	}{
		{"image-cluster-kind", Request{Query: "image:nginx* cluster:member1 kind:Pod"}},
		{"phase-namespace", Request{Query: "phase:Running namespace:ns-7"}},
		{"free-text", Request{Query: "member1-kwok-node-42"}},
		{"word", Request{Query: "redis"}},
		{"all", Request{Query: "*"}},
		{"all-scoped", Request{Query: "*", Scopes: []Scope{
			{Cluster: "member1", Resource: "pods"},
			{Cluster: "member2", Resource: "pods", Namespaces: []string{"ns-1", "ns-2"}},
		}}},
		{"text-keyword-scoped", Request{Query: "redis phase:Running", Scopes: []Scope{
			{Cluster: "member1", Resource: "pods"}, {Cluster: "member3", Resource: "pods"},
		}}},
		{"deep-page", Request{Query: "phase:running", From: 5000, Size: 100}},
	}
	for _, q := range queries {
		b.Run(q.name, func(b *testing.B) {
			var lat []time.Duration
			var total uint64
			for b.Loop() {
				t0 := time.Now()
				r, err := ix.Search(ctx, q.req)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				total = r.Total
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(total), "hits")
		})
	}
}

// BenchmarkChurn measures an index fed like a watch: 10,000 pods, then per
// iteration 5 pod updates and a Flush (a FlushInterval's worth of changes).
// It reports the segments, heap and query latency at the end, which stay flat
// with merging and grow with every flush without it.
func BenchmarkChurn(b *testing.B) {
	const pods = 10000
	ix := openTest(b, Options{Dir: benchDir(b)})
	for i := range pods {
		k, o := kwokPod("member"+strconv.Itoa(i%3+1), i)
		ix.Put(k, o)
	}
	mustFlush(b, ix)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		for range 5 {
			i := rng.IntN(pods)
			k, o := kwokPod("member"+strconv.Itoa(i%3+1), i)
			ix.Put(k, o)
		}
		mustFlush(b, ix)
	}
	b.StopTimer()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	start := time.Now()
	for range 20 {
		if _, err := ix.Search(context.Background(), Request{Query: "image:nginx* cluster:member1 kind:Pod"}); err != nil {
			b.Fatal(err)
		}
	}
	s := ix.Stats()
	b.ReportMetric(float64(s.Segments), "segments")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(time.Since(start).Microseconds())/20/1000, "query-ms")
}
