package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/metrics/legacyregistry"
)

// dashboard is the Grafana dashboard the chart ships.
const dashboard = "../charts/flotilla/dashboards/flotilla.json"

var (
	// labelMatchers, ranges, groupings and quoted strings hold no metric.
	notMetrics = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|\b(by|without)\s*\([^)]*\)|"[^"]*"`)
	// labelValues is Grafana's label_values(metric, label).
	labelValues = regexp.MustCompile(`label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,[^)]*\)`)
	identifier  = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// promQL are the functions and words the dashboard's queries use.
	promQL = []string{"sum", "rate", "histogram_quantile", "label_values"}
)

// queries are the PromQL expressions of the dashboard: the targets' expr
// and the template variables' query, wherever they are nested.
func queries(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "expr" || k == "query" && strings.Contains(s, "(")) {
				out = append(out, s)
			}
			out = append(out, queries(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, queries(x)...)
		}
	}
	return out
}

// metricsOf are the metric names an expression reads.
func metricsOf(expr string) []string {
	expr = labelValues.ReplaceAllString(expr, "$1")
	expr = notMetrics.ReplaceAllString(expr, " ")
	var out []string
	for _, id := range identifier.FindAllString(expr, -1) {
		if !slices.Contains(promQL, id) {
			out = append(out, id)
		}
	}
	return out
}

// The dashboard is valid JSON; every query reads metrics this process
// serves (Karmada's, declared here, and the workqueue, Go and process
// collectors), and every metric declared here is on it.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var d any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboard, err)
	}
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: "dashboard-test"})
	defer q.ShutDown()
	served := map[string]bool{}
	for _, n := range Names() {
		served[n] = true
	}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		served[f.GetName()] = true
	}
	used := map[string]bool{}
	exprs := queries(d)
	if len(exprs) == 0 {
		t.Fatal("the dashboard has no query")
	}
	for _, expr := range exprs {
		names := metricsOf(expr)
		if len(names) == 0 {
			t.Errorf("query %q reads no metric", expr)
		}
		for _, n := range names {
			base := n
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if b, ok := strings.CutSuffix(n, suffix); ok && served[b] {
					base = b
				}
			}
			if !served[base] {
				t.Errorf("query %q reads %s, which is not served", expr, n)
			}
			used[base] = true
		}
	}
	for _, n := range Names() {
		if !used[n] {
			t.Errorf("%s is on no panel", n)
		}
	}
}

// metricsOf finds the metrics of the query shapes the dashboard uses.
func TestMetricsOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`cluster_ready_state{job=~"$job",cluster_name=~"$cluster"}`, []string{"cluster_ready_state"}},
		{`histogram_quantile(0.95, sum by (le, result) (rate(binding_sync_work_duration_seconds_bucket{job=~"$job"}[$__rate_interval])))`,
			[]string{"binding_sync_work_duration_seconds_bucket"}},
		{`label_values(karmada_build_info, job)`, []string{"karmada_build_info"}},
		{`rate(a_total[5m]) / rate(b_total[5m])`, []string{"a_total", "b_total"}},
	} {
		if got := metricsOf(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("metricsOf(%q) = %v, want %v", tc.expr, got, tc.want)
		}
	}
}
