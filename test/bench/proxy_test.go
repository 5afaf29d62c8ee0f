// Package bench measures Flotilla against the physical limits of the test
// bed, each figure a ratio against a baseline taken in the same run. It runs
// with `make bench`, not with `make test`.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	if os.Getenv("FLOTILLA_BENCH") == "" {
		fmt.Println("bench: skipped; set FLOTILLA_BENCH=1 (make bench) to run the benchmarks")
		os.Exit(0)
	}
	framework.Main(m, "bench", env.Options{
		// One node each, with room for the failover bench's 500
		// Deployments and the 500 of its direct floor at once.
		Members:  []env.MemberOptions{{Name: "member1", Nodes: benchNodes}, {Name: "member2", Nodes: benchNodes}, {Name: "member3", Nodes: benchNodes}},
		Flotilla: &env.FlotillaOptions{Args: flotillaArgs()},
	}, "member1", "member2", "member3")
}

// flotillaArgs: with FLOTILLA_BENCH_NO_FSYNC=1 flotilla-apiserver's
// embedded etcd skips fsync like the test bed's own etcd, which stores the
// host and the members, so both sides of a ratio write to the same kind of
// storage. FLOTILLA_BENCH_FLOTILLA_ARGS adds flags (space-separated), to
// compare settings in one command, e.g. --gc-percent=100.
func flotillaArgs() []string {
	// The taint manager runs (TestFailoverTaintEviction), as in make up.
	args := []string{"--enable-no-execute-taint-eviction"}
	if os.Getenv("FLOTILLA_BENCH_NO_FSYNC") == "1" {
		args = append(args, "--embedded-etcd-unsafe-no-fsync")
	}
	return append(args, strings.Fields(os.Getenv("FLOTILLA_BENCH_FLOTILLA_ARGS"))...)
}

// clients returns the admin client of member1 directly and through
// clusters/member1/proxy on the control plane.
func clients(t *testing.T) (direct, proxied kubernetes.Interface) {
	t.Helper()
	m, err := framework.Member(t, "member1").RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	h, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*rest.Config{m, h} {
		c.QPS, c.Burst = 5000, 5000
	}
	h.Host += "/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"
	direct, proxied = kubernetes.NewForConfigOrDie(m), kubernetes.NewForConfigOrDie(h)
	// Unified auth must first let the impersonator act as the admin.
	err = wait.PollUntilContextTimeout(t.Context(), 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := proxied.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the admin cannot use the proxy: %v", err)
	}
	return direct, proxied
}

func percentile(d []time.Duration, p float64) time.Duration { return framework.Percentile(d, p) }

func record(t *testing.T, name, text string) {
	t.Helper()
	fmt.Print(text)
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "_output", "bench")
	_ = os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// GET of one member object through the proxy against the same GET on the
// member, interleaved so both see the same machine load.
func TestProxyGetLatency(t *testing.T) {
	ctx := t.Context()
	direct, proxied := clients(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench-get", Namespace: "default"}, Data: map[string]string{"k": "v"}}
	if _, err := direct.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func(c kubernetes.Interface) time.Duration {
		start := time.Now()
		if _, err := c.CoreV1().ConfigMaps("default").Get(ctx, "bench-get", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	// The aggregation floor: a GET the host forwards to flotilla-apiserver
	// that goes no further (the Cluster object, from the watch cache).
	hostCfg, err := framework.Env.Host.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	hostCfg.QPS, hostCfg.Burst = 5000, 5000
	karmada := versioned.NewForConfigOrDie(hostCfg)
	aggregated := func() time.Duration {
		start := time.Now()
		if _, err := karmada.ClusterV1alpha1().Clusters().Get(ctx, "member1", metav1.GetOptions{ResourceVersion: "0"}); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	for range 200 { // warm connections and caches
		get(direct)
		get(proxied)
		aggregated()
	}
	const n = 3000
	var d, p, a []time.Duration
	for range n {
		d = append(d, get(direct))
		p = append(p, get(proxied))
		a = append(a, aggregated())
	}
	dp50, dp99, pp50, pp99 := percentile(d, .5), percentile(d, .99), percentile(p, .5), percentile(p, .99)
	record(t, "proxy-get.txt", fmt.Sprintf("proxy GET (n=%d): direct p50 %v p99 %v; through clusters/member1/proxy p50 %v p99 %v; ratio p50 %.2f p99 %.2f; "+
		"aggregation floor (GET of a Cluster through the host) p50 %v p99 %v\n",
		n, dp50, dp99, pp50, pp99, float64(pp50)/float64(dp50), float64(pp99)/float64(dp99), percentile(a, .5), percentile(a, .99)))
}

// A watch of 1,000 events through the proxy against a watch on the member,
// both open while the same 1,000 ConfigMaps are created.
func TestProxyWatch(t *testing.T) {
	ctx := t.Context()
	direct, proxied := clients(t)
	const n = 1000
	const ns = "default"
	label := metav1.ListOptions{LabelSelector: "bench=watch"}
	dw, err := direct.CoreV1().ConfigMaps(ns).Watch(ctx, label)
	if err != nil {
		t.Fatal(err)
	}
	defer dw.Stop()
	pw, err := proxied.CoreV1().ConfigMaps(ns).Watch(ctx, label)
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Stop()
	created := make([]time.Time, n)
	type result struct {
		lags []time.Duration
		last time.Time
	}
	collect := func(w watch.Interface, out chan<- result) {
		var r result
		for ev := range w.ResultChan() {
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || ev.Type != watch.Added {
				continue
			}
			var i int
			_, _ = fmt.Sscanf(cm.Name, "bench-watch-%d", &i)
			r.lags = append(r.lags, time.Since(created[i]))
			if len(r.lags) == n {
				r.last = time.Now()
				break
			}
		}
		out <- r
	}
	dres, pres := make(chan result, 1), make(chan result, 1)
	go collect(dw, dres)
	go collect(pw, pres)
	start := time.Now()
	for i := range n {
		created[i] = time.Now()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-watch-%d", i), Namespace: ns, Labels: map[string]string{"bench": "watch"}}}
		if _, err := direct.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var d, p result
	select {
	case d = <-dres:
	case <-time.After(2 * time.Minute):
		t.Fatal("the direct watch did not deliver 1,000 events")
	}
	select {
	case p = <-pres:
	case <-time.After(2 * time.Minute):
		t.Fatal("the proxied watch did not deliver 1,000 events")
	}
	if len(d.lags) != n || len(p.lags) != n {
		t.Fatalf("events: direct %d, proxied %d, want %d each", len(d.lags), len(p.lags), n)
	}
	record(t, "proxy-watch.txt", fmt.Sprintf("proxy watch (%d events): all delivered after direct %v, proxied %v; event lag direct p50 %v p99 %v, proxied p50 %v p99 %v; ratio p50 %.2f p99 %.2f\n",
		n, d.last.Sub(start), p.last.Sub(start), percentile(d.lags, .5), percentile(d.lags, .99), percentile(p.lags, .5), percentile(p.lags, .99),
		float64(percentile(p.lags, .5))/float64(percentile(d.lags, .5)), float64(percentile(p.lags, .99))/float64(percentile(d.lags, .99))))
}
