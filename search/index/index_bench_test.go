package index

import (
	"context"
	"encoding/json"
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
	k, obj := kwokPod("member1", 1)
	raw, _ := json.Marshal(obj)
	b.ReportMetric(float64(len(raw)), "bytes/pod")
	_ = k

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
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.Logf("built %d pods in %v: %.0f docs/s, %.0f heap bytes/doc, %d segments", n, build.Round(time.Millisecond),
		float64(n)/build.Seconds(), float64(int64(after.HeapInuse)-int64(before.HeapInuse))/float64(n), ix.segments())
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
		{"free-text", Request{Query: "kwok-node-42"}},
		{"word", Request{Query: "redis"}},
		{"all", Request{Query: "*"}},
		{"all-scoped", Request{Query: "*", Scopes: []Scope{
			{Cluster: "member1", Resource: "pods"},
			{Cluster: "member2", Resource: "pods", Namespaces: []string{"ns-1", "ns-2"}},
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
