package federatedhpa

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/podautoscaler"
	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

// Each metric read is observed once, by result and the metric's source
// type. Not parallel: the histogram is the process's.
func TestMetricsReconcilerObservesPulls(t *testing.T) {
	pods := []podautoscaler.Pod{{Cluster: "m1", Namespace: "default", Name: "m1-web"}}
	for _, tc := range []struct {
		name   string
		source *fakeMetrics
		result string
	}{
		{name: "read", source: &fakeMetrics{cpu: map[string]int64{"m1-web": 1}}, result: "success"},
		{name: "metrics API down", source: &fakeMetrics{err: errors.New("down")}, result: "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := map[string]string{"result": tc.result, "metricType": "Resource"}
			before, _ := telemetrytest.Sample(t, telemetry.FederatedHPAPullMetricsDuration, l)
			r := metricsReconciler{source: tc.source}
			r.reconcile(context.Background(), fhpa(), labels.SelectorFromSet(labels.Set{"app": "web"}), pods, nil)
			if v, _ := telemetrytest.Sample(t, telemetry.FederatedHPAPullMetricsDuration, l); v-before != 1 {
				t.Errorf("%s%v moved by %v, want 1", telemetry.FederatedHPAPullMetricsDuration, l, v-before)
			}
		})
	}
}
