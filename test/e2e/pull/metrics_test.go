package pull

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// flotilla-agent serves its metrics on --metrics-bind-address over plain
// HTTP: its build, the workqueues, the Go runtime, and the gauges of the
// cluster it reports, ready.
func TestAgentMetrics(t *testing.T) {
	pullMember(t)
	port := framework.Env.Member("member3").Ports.AgentMetrics
	member3 := map[string]string{"cluster_name": "member3"}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		ss, err := framework.PlainMetrics(ctx, port)
		if err != nil {
			return err.Error()
		}
		for _, name := range []string{telemetry.WorkSyncWorkloadDuration, "workqueue_adds_total", "go_goroutines"} {
			if !ss.Has(name) {
				return name + " is not served"
			}
		}
		for name, want := range map[string]float64{telemetry.BuildInfo: 1, telemetry.ClusterReadyState: 1} {
			l := member3
			if name == telemetry.BuildInfo {
				l = nil
			}
			if v := ss.Value(name, l); v != want {
				return fmt.Sprintf("%s%v = %v, want %v", name, l, v, want)
			}
		}
		if v := ss.Value(telemetry.ClusterSyncStatusDuration, member3); v == 0 {
			return telemetry.ClusterSyncStatusDuration + " has no sample of member3"
		}
		return ""
	})
}
