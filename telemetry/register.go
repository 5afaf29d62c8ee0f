package telemetry

import (
	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"

	// The workqueues' depth, latency and retries (workqueue_*), registered
	// in legacyregistry for every queue made after this package loads.
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
)

var buildInfo = newBuildInfo()

func init() {
	for _, m := range []k8smetrics.Registerable{
		clusterReady, clusterNodes, clusterReadyNodes,
		clusterMemoryAllocatable, clusterCPUAllocatable, clusterPodAllocatable,
		clusterMemoryAllocated, clusterCPUAllocated, clusterPodAllocated, clusterSyncStatus,
		matchPolicy, applyPolicy, applyPolicyAttempts, syncWork, syncWorkload,
		createResource, updateResource, deleteResource, preemption,
		federatedHPA, federatedHPAPull, cronFederatedHPA,
		scheduleAttempts, e2eScheduling, schedulingAlgorithm, queueIncoming,
		buildInfo,
	} {
		legacyregistry.MustRegister(m)
	}
	buildInfo.Set(1)
	initSeries()
}

// metricTypes are the FederatedHPA metric source types (autoscaling/v2's).
var metricTypes = []string{"Resource", "Pods", "Object", "External", "ContainerResource"}

// initSeries creates, at zero, the series whose labels are known in
// advance, so that every metric is on /metrics from the start (a
// dashboard or alert sees 0, not "no data"). Series labelled by cluster
// or kind appear with their first observation.
func initSeries() {
	matchPolicy.WithLabelValues()
	for _, r := range []string{ResultSuccess, ResultError} {
		applyPolicy.WithLabelValues(r)
		applyPolicyAttempts.WithLabelValues(r)
		syncWork.WithLabelValues(r)
		syncWorkload.WithLabelValues(r)
		preemption.WithLabelValues(r)
		federatedHPA.WithLabelValues(r)
		cronFederatedHPA.WithLabelValues(r)
		for _, t := range metricTypes {
			federatedHPAPull.WithLabelValues(r, t)
		}
	}
	for _, r := range []string{resultScheduled, ResultError} {
		for _, t := range []string{ScheduleTypeFirst, ScheduleTypeReconcile, ScheduleTypeScale} {
			scheduleAttempts.WithLabelValues(r, t)
			e2eScheduling.WithLabelValues(r, t)
		}
	}
	for _, e := range []string{EventBindingAdd, EventBindingUpdate, EventScheduleAttemptFailure, EventPolicyChanged, EventClusterChanged} {
		queueIncoming.WithLabelValues(e)
	}
}
