package framework

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/telemetry"
)

// Sample is one value of a Prometheus text page: a counter, gauge or
// untyped value under its name, or a histogram's or summary's
// <name>_sum and <name>_count.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Samples is a parsed metrics page.
type Samples []Sample

// ParseMetrics parses a Prometheus text page with the Prometheus parser.
func ParseMetrics(raw []byte) (Samples, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	var out Samples
	for name, f := range families {
		for _, m := range f.GetMetric() {
			labels := make(map[string]string, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(n string, v float64) { out = append(out, Sample{Name: n, Labels: labels, Value: v}) }
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(name, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				add(name+"_sum", m.GetHistogram().GetSampleSum())
				add(name+"_count", float64(m.GetHistogram().GetSampleCount()))
			case dto.MetricType_SUMMARY:
				add(name+"_sum", m.GetSummary().GetSampleSum())
				add(name+"_count", float64(m.GetSummary().GetSampleCount()))
			default:
				add(name, m.GetUntyped().GetValue())
			}
		}
	}
	return out, nil
}

// Sum adds the values of the samples called name whose labels satisfy
// keep (all of them when keep is nil).
func (ss Samples) Sum(name string, keep func(map[string]string) bool) float64 {
	var n float64
	for _, s := range ss {
		if s.Name == name && (keep == nil || keep(s.Labels)) {
			n += s.Value
		}
	}
	return n
}

// metricsClients are the clients FlotillaMetrics reads with, by server:
// one each, as a client per call would leave a connection open on the
// server each time (client-go does not share the transport of a
// kubeconfig naming certificate files), which a test counting the
// server's goroutines would count.
var metricsClients sync.Map

// FlotillaMetrics reads and parses flotilla-apiserver's /metrics on its
// own port (FlotillaConfig).
func FlotillaMetrics(ctx context.Context, t *testing.T) (Samples, error) {
	return metricsOf(ctx, FlotillaConfig(t))
}

// ReplicaMetrics reads and parses the /metrics of flotilla-apiserver's
// replica i (Env.ReplicaConfig).
func ReplicaMetrics(ctx context.Context, i int) (Samples, error) {
	cfg, err := Env.ReplicaConfig(i)
	if err != nil {
		return nil, err
	}
	return metricsOf(ctx, cfg)
}

func metricsOf(ctx context.Context, cfg *rest.Config) (Samples, error) {
	raw, err := getRaw(ctx, cfg, "/metrics")
	if err != nil {
		return nil, err
	}
	return ParseMetrics(raw)
}

// ReplicaHeapProfile reads a heap profile of replica i, taken after a
// garbage collection (/debug/pprof/heap?gc=1).
func ReplicaHeapProfile(ctx context.Context, i int) ([]byte, error) {
	cfg, err := Env.ReplicaConfig(i)
	if err != nil {
		return nil, err
	}
	return getRaw(ctx, cfg, "/debug/pprof/heap?gc=1")
}

// getRaw reads path from the server of cfg, with one client per server.
func getRaw(ctx context.Context, cfg *rest.Config, path string) ([]byte, error) {
	c, ok := metricsClients.Load(cfg.Host)
	if !ok {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		c, _ = metricsClients.LoadOrStore(cfg.Host, cs)
	}
	u, err := url.Parse(path)
	if err != nil {
		return nil, err
	}
	req := c.(kubernetes.Interface).CoreV1().RESTClient().Get().AbsPath(u.Path)
	for k, vs := range u.Query() {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	return req.DoRaw(ctx)
}

// MemberWatches returns the watches flotilla-apiserver holds open on the
// members named, by "cluster/resource" (resource.group), from its
// flotilla_member_watches; resources without an open watch are left out.
func MemberWatches(ctx context.Context, t *testing.T, clusters ...string) (map[string]float64, error) {
	ss, err := FlotillaMetrics(ctx, t)
	if err != nil {
		return nil, err
	}
	open := map[string]float64{}
	for _, s := range ss {
		if s.Name == "flotilla_member_watches" && slices.Contains(clusters, s.Labels["cluster"]) && s.Value != 0 {
			open[s.Labels["cluster"]+"/"+s.Labels["resource"]] = s.Value
		}
	}
	return open, nil
}

// OneWatchEach returns what is wrong with open (MemberWatches): a resource
// of want without exactly one watch on a cluster, any resource with more.
func OneWatchEach(open map[string]float64, clusters, want []string) string {
	var problems []string
	for _, c := range clusters {
		for _, r := range want {
			if open[c+"/"+r] != 1 {
				problems = append(problems, fmt.Sprintf("%s/%s: %v watches, want 1", c, r, open[c+"/"+r]))
			}
		}
	}
	for k, v := range open {
		c, r, _ := strings.Cut(k, "/")
		reported := slices.Contains(clusters, c) && slices.Contains(want, r)
		if v > 1 && !reported {
			problems = append(problems, fmt.Sprintf("%s: %v watches, want at most 1", k, v))
		}
	}
	slices.Sort(problems)
	return strings.Join(problems, "; ")
}

// PlainMetrics reads and parses the /metrics a process serves over plain
// HTTP on 127.0.0.1:port (--metrics-bind-address), as Prometheus scrapes
// Karmada's components.
func PlainMetrics(ctx context.Context, port int) (Samples, error) {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + telemetry.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return ParseMetrics(raw)
}

// Has tells whether the page has the metric name (a histogram by its
// _count).
func (ss Samples) Has(name string) bool {
	for _, s := range ss {
		if s.Name == name || s.Name == name+"_count" {
			return true
		}
	}
	return false
}

// Value is the sum of the samples of name (a histogram's count) whose
// labels include want.
func (ss Samples) Value(name string, want map[string]string) float64 {
	keep := func(l map[string]string) bool {
		for k, v := range want {
			if l[k] != v {
				return false
			}
		}
		return true
	}
	return ss.Sum(name, keep) + ss.Sum(name+"_count", keep)
}
