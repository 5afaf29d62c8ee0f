package scheduler

import (
	"context"
	"testing"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/placement"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

// Each scheduling attempt counts once, by Karmada's result and schedule
// type, with the algorithm's steps; a failed one queues the binding again
// as a ScheduleAttemptFailure. Not parallel: the metrics are the process's.
func TestReconcileObservesAttempts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		rb           *workv1alpha2.ResourceBinding
		result, kind string
		// failure: queued again after a failed attempt.
		failure bool
	}{
		{name: "first schedule", rb: newRB(), result: "scheduled", kind: telemetry.ScheduleTypeFirst},
		{name: "replicas changed: scale", result: "scheduled", kind: telemetry.ScheduleTypeScale,
			rb: newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 1)} })},
		{name: "scheduled again: reconcile", result: "scheduled", kind: telemetry.ScheduleTypeReconcile,
			rb: newRB(func(b *workv1alpha2.ResourceBinding) {
				b.Spec.Clusters = []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)}
			})},
		{name: "no cluster fits: error", result: "error", kind: telemetry.ScheduleTypeFirst, failure: true,
			rb: newRB(func(b *workv1alpha2.ResourceBinding) { b.Spec.Placement.ClusterAffinity = pt.OnClusters("zzz") })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attempt := map[string]string{"result": tc.result, "scheduleType": tc.kind}
			filter := map[string]string{"scheduleStep": placement.StepFilter}
			failures := map[string]string{"event": telemetry.EventScheduleAttemptFailure}
			attempts, _ := telemetrytest.Sample(t, telemetry.SchedulerScheduleAttemptsTotal, attempt)
			latencies, _ := telemetrytest.Sample(t, telemetry.SchedulerE2ESchedulingDuration, attempt)
			filters, _ := telemetrytest.Sample(t, telemetry.SchedulerAlgorithmDuration, filter)
			requeues, _ := telemetrytest.Sample(t, telemetry.SchedulerQueueIncomingBindings, failures)

			f := newFixture(t, fixtureClusters(), tc.rb)
			if err := f.ctrl.reconcile(context.Background(), names.BindingKey("default", "web")); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				metric string
				labels map[string]string
				before float64
				want   float64
			}{
				{telemetry.SchedulerScheduleAttemptsTotal, attempt, attempts, 1},
				{telemetry.SchedulerE2ESchedulingDuration, attempt, latencies, 1},
				{telemetry.SchedulerAlgorithmDuration, filter, filters, 1},
				{telemetry.SchedulerQueueIncomingBindings, failures, requeues, map[bool]float64{true: 1}[tc.failure]},
			} {
				if v, _ := telemetrytest.Sample(t, c.metric, c.labels); v-c.before != c.want {
					t.Errorf("%s%v moved by %v, want %v", c.metric, c.labels, v-c.before, c.want)
				}
			}
		})
	}
}
