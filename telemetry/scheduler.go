package telemetry

import (
	"time"

	k8smetrics "k8s.io/component-base/metrics"
)

// The scheduler's labels (Karmada's).
const (
	scheduleTypeLabel = "scheduleType"
	scheduleStepLabel = "scheduleStep"
	eventLabel        = "event"
)

// Karmada's schedule types: a binding's first decision, a decision again
// after its placement or the clusters changed, or after its replicas did.
const (
	ScheduleTypeFirst     = "FirstSchedule"
	ScheduleTypeReconcile = "ReconcileSchedule"
	ScheduleTypeScale     = "ScaleSchedule"
)

// Karmada's events that queue a binding for scheduling.
const (
	EventBindingAdd             = "BindingAdd"
	EventBindingUpdate          = "BindingUpdate"
	EventScheduleAttemptFailure = "ScheduleAttemptFailure"
	EventPolicyChanged          = "PolicyChanged"
	EventClusterChanged         = "ClusterChanged"
)

// schedulerBuckets are Karmada's: 1ms to about 16s.
var schedulerBuckets = k8smetrics.ExponentialBuckets(0.001, 2, 15)

var (
	scheduleAttempts = counter(SchedulerScheduleAttemptsTotal, "Number of attempts to schedule resourceBinding",
		resultLabel, scheduleTypeLabel)
	e2eScheduling = histogram(SchedulerE2ESchedulingDuration, "E2e scheduling latency in seconds",
		schedulerBuckets, resultLabel, scheduleTypeLabel)
	schedulingAlgorithm = histogram(SchedulerAlgorithmDuration, "Scheduling algorithm latency in seconds(exclude scale scheduler)",
		schedulerBuckets, scheduleStepLabel)
	queueIncoming = counter(SchedulerQueueIncomingBindings, "Number of bindings added to scheduling queues by event type.",
		eventLabel)
)

// ObserveSchedule records one scheduling attempt of a binding and how long
// it took from start, decision and write.
func ObserveSchedule(scheduleType string, err error, start time.Time) {
	result := resultScheduled
	if err != nil {
		result = ResultError
	}
	e2eScheduling.WithLabelValues(result, scheduleType).Observe(time.Since(start).Seconds())
	scheduleAttempts.WithLabelValues(result, scheduleType).Inc()
}

// ObserveScheduleStep records how long one step of the scheduling
// algorithm (Filter, Score, Select, AssignReplicas) took.
func ObserveScheduleStep(step string, d time.Duration) {
	schedulingAlgorithm.WithLabelValues(step).Observe(d.Seconds())
}

// CountSchedulerQueueIncoming records a binding queued for scheduling by
// event.
func CountSchedulerQueueIncoming(event string) {
	queueIncoming.WithLabelValues(event).Inc()
}
