package cronfederatedhpa

import (
	"testing"

	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
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
			before, _ := telemetrytest.Sample(t, telemetry.CronFederatedHPAProcessDuration, success)
			if err := h.reconcile(t); err != nil {
				t.Fatal(err)
			}
			if v, _ := telemetrytest.Sample(t, telemetry.CronFederatedHPAProcessDuration, success); v-before != tc.want {
				t.Errorf("%s moved by %v, want %v", telemetry.CronFederatedHPAProcessDuration, v-before, tc.want)
			}
		})
	}
}
