// Package telemetrytest reads the process's metrics (legacyregistry) in
// tests: the controllers' tests check what they observed with it.
package telemetrytest

import (
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// Sample is the value of the series of name whose labels include labels:
// a counter's or gauge's value, a histogram's count; found is false when
// there is no such series.
func Sample(t testing.TB, name string, labels map[string]string) (v float64, found bool) {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !testutil.LabelsMatch(m, labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), true
			case m.Gauge != nil:
				return m.Gauge.GetValue(), true
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}
