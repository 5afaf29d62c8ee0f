package cronfederatedhpa

import (
	"testing"

	"github.com/flotilla-io/flotilla/metrics"
	"github.com/flotilla-io/flotilla/metrics/metricstest"
)

// Each reconcile of an existing CronFederatedHPA is observed once; one
// gone is not processed. Not parallel: the histogram is the process's.
func TestReconcileObservesProcessing(t *testing.T) {
	success := map[string]string{"result": "success"}
	for _, tc := range []struct {
		name   string
		exists bool
		want   float64
	}{
		{name: "processed", exists: true, want: 1},
		{name: "gone", exists: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h *harness
			if tc.exists {
				h = newHarness(t, workloadCron())
			} else {
				h = newHarness(t)
			}
			before, _ := metricstest.Sample(t, metrics.CronFederatedHPAProcessDuration, success)
			if err := h.reconcile(t); err != nil {
				t.Fatal(err)
			}
			if v, _ := metricstest.Sample(t, metrics.CronFederatedHPAProcessDuration, success); v-before != tc.want {
				t.Errorf("%s moved by %v, want %v", metrics.CronFederatedHPAProcessDuration, v-before, tc.want)
			}
		})
	}
}
