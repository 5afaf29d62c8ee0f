package bench

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// flotillaMetrics reads flotilla-apiserver's /metrics on its own port (not
// through the aggregator), as the host's admin: delegated authentication
// accepts the host's client certificates.
type flotillaMetrics struct {
	client *http.Client
	url    string
}

func newFlotillaMetrics(t *testing.T) *flotillaMetrics {
	t.Helper()
	cfg := framework.FlotillaConfig(t)
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &flotillaMetrics{client: c, url: cfg.Host + "/metrics"}
}

// scrape returns the metric samples, or nil while the server is down.
func (m *flotillaMetrics) scrape(t *testing.T) framework.Samples {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, m.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	ss, err := framework.ParseMetrics(raw)
	if err != nil {
		return nil
	}
	return ss
}

// isWrite tells whether an HTTP method or API verb changes state.
// queueSummary describes each controller queue: items handled, average wait
// in the queue and average work, so a figure shows where the time went.
func queueSummary(ss framework.Samples) string {
	type q struct{ n, wait, work, workN, retries float64 }
	qs := map[string]*q{}
	get := func(name string) *q {
		if qs[name] == nil {
			qs[name] = &q{}
		}
		return qs[name]
	}
	for _, s := range ss {
		name := s.Labels["name"]
		switch s.Name {
		case "workqueue_queue_duration_seconds_count":
			get(name).n = s.Value
		case "workqueue_queue_duration_seconds_sum":
			get(name).wait = s.Value
		case "workqueue_work_duration_seconds_sum":
			get(name).work = s.Value
		case "workqueue_work_duration_seconds_count":
			get(name).workN = s.Value
		case "workqueue_retries_total":
			get(name).retries = s.Value
		}
	}
	var names []string
	for n, v := range qs {
		if v.n >= 10 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		v := qs[n]
		fmt.Fprintf(&b, "    queue %-22s items %6.0f  wait avg %7.1f ms  work avg %6.1f ms  delayed adds %5.0f\n",
			n, v.n, 1000*v.wait/v.n, 1000*v.work/max(v.workN, 1), v.retries)
	}
	return b.String()
}

// writeBreakdown lists the requests flotilla-apiserver served (by resource,
// subresource and verb) and the requests its clients sent (by host and
// method) between two scrapes, largest first, so a figure shows which
// requests a template costs. Watches are left out.
func writeBreakdown(before, after framework.Samples, perTemplate float64) string {
	delta := map[string]float64{}
	add := func(ss framework.Samples, sign float64) {
		for _, s := range ss {
			var key string
			switch s.Name {
			case "apiserver_request_total", "flotilla_inprocess_requests_total":
				if s.Labels["verb"] == "WATCH" {
					continue
				}
				r := s.Labels["resource"]
				if sub := s.Labels["subresource"]; sub != "" {
					r += "/" + sub
				}
				how := "served"
				if s.Name != "apiserver_request_total" {
					how = "in process"
				}
				key = fmt.Sprintf("%s %s %s", how, s.Labels["verb"], r)
				if code := s.Labels["code"]; code >= "400" {
					key += " (" + code + ")"
				}
			case "rest_client_requests_total":
				key = fmt.Sprintf("sent to %s %s", s.Labels["host"], s.Labels["method"])
			default:
				continue
			}
			delta[key] += sign * s.Value
		}
	}
	add(after, 1)
	add(before, -1)
	keys := make([]string, 0, len(delta))
	for k, v := range delta {
		if v >= 1 {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return int(delta[b] - delta[a]) })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "    %-60s %7.0f  %5.2f per template\n", k, delta[k], delta[k]/perTemplate)
	}
	return b.String()
}

// profile saves a CPU profile of flotilla-apiserver over the next seconds to
// _output/bench/<name> when FLOTILLA_BENCH_PROFILE is set; it returns at once
// and the profile is written in the background.
func (m *flotillaMetrics) profile(t *testing.T, name string, seconds int) {
	if os.Getenv("FLOTILLA_BENCH_PROFILE") == "" {
		return
	}
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(m.url, "/metrics") + "/debug/pprof/profile?seconds=" + strconv.Itoa(seconds)
	go func() {
		resp, err := m.client.Get(url)
		if err != nil {
			fmt.Println("profile:", err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Println("profile:", resp.Status, err)
			return
		}
		_ = os.WriteFile(filepath.Join(root, "_output", "bench", name), raw, 0o644)
	}()
}

// heapProfile saves flotilla-apiserver's heap profile (in use and
// allocated, after a GC) to _output/bench/<name> when
// FLOTILLA_BENCH_PROFILE is set, and returns its Go memory figures
// (heap in use, heap the runtime holds, released to the OS) from
// /metrics either way.
func (m *flotillaMetrics) heapProfile(t *testing.T, name string) string {
	t.Helper()
	if os.Getenv("FLOTILLA_BENCH_PROFILE") != "" {
		root, err := env.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.client.Get(strings.TrimSuffix(m.url, "/metrics") + "/debug/pprof/heap?gc=1")
		if err == nil {
			raw, rerr := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				_ = os.WriteFile(filepath.Join(root, "_output", "bench", name), raw, 0o644)
			} else {
				fmt.Println("heap profile:", resp.Status, rerr)
			}
		} else {
			fmt.Println("heap profile:", err)
		}
	}
	ss := m.scrape(t)
	mib := func(metric string) float64 { return ss.Sum(metric, nil) / (1 << 20) }
	return fmt.Sprintf("heap in use %.0f MiB, heap held %.0f MiB (released to the OS %.0f MiB), goroutines %.0f",
		mib("go_memstats_heap_inuse_bytes"), mib("go_memstats_heap_sys_bytes"), mib("go_memstats_heap_released_bytes"), ss.Sum("go_goroutines", nil))
}

// queueDelta returns after with the value of each sample in before
// subtracted: the counters of what happened between two scrapes.
func queueDelta(before, after framework.Samples) framework.Samples {
	key := func(s framework.Sample) string {
		names := slices.Sorted(maps.Keys(s.Labels))
		var b strings.Builder
		b.WriteString(s.Name)
		for _, n := range names {
			b.WriteString("," + n + "=" + s.Labels[n])
		}
		return b.String()
	}
	old := map[string]float64{}
	for _, s := range before {
		old[key(s)] = s.Value
	}
	out := make(framework.Samples, 0, len(after))
	for _, s := range after {
		s.Value -= old[key(s)]
		out = append(out, s)
	}
	return out
}

// hostWrites scrapes the host kube-apiserver's request counters and sums
// the writes of resource (events, deployments...), its subresources'
// (status) left out.
func hostWrites(t *testing.T, hc kubernetes.Interface, resource string) float64 {
	return hostWriteCount(t, hc, resource, false)
}

// hostWritesWithSubresources is hostWrites counting the writes of its
// subresources too.
func hostWritesWithSubresources(t *testing.T, hc kubernetes.Interface, resource string) float64 {
	return hostWriteCount(t, hc, resource, true)
}

func hostWriteCount(t *testing.T, hc kubernetes.Interface, resource string, subresources bool) float64 {
	t.Helper()
	raw, err := hc.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Logf("scraping the host's metrics: %v", err)
		return 0
	}
	ss, err := framework.ParseMetrics(raw)
	if err != nil {
		t.Logf("parsing the host's metrics: %v", err)
		return 0
	}
	return ss.Sum("apiserver_request_total", func(l map[string]string) bool {
		return l["resource"] == resource && (subresources || l["subresource"] == "") && framework.IsWrite(l["verb"])
	})
}

// profileAPIServer saves a CPU profile of the kube-apiserver behind c (its
// /debug/pprof, which kube-apiserver serves to system:masters) over the
// next seconds to _output/bench/<name> when FLOTILLA_BENCH_PROFILE is set:
// the host's and a member's share of a benchmark's CPU, by function.
func profileAPIServer(t *testing.T, c kubernetes.Interface, name string, seconds int) {
	if os.Getenv("FLOTILLA_BENCH_PROFILE") == "" {
		return
	}
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithoutCancel(t.Context())
	go func() {
		raw, err := c.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
		if err != nil {
			fmt.Println("profile of", name+":", err)
			return
		}
		_ = os.WriteFile(filepath.Join(root, "_output", "bench", name), raw, 0o644)
	}()
}
