package telemetry

import (
	"time"

	k8smetrics "k8s.io/component-base/metrics"
)

// Karmada's labels of the pipeline's metrics.
const (
	resultLabel          = "result"
	apiVersionLabel      = "apiversion"
	kindLabel            = "kind"
	memberClusterLabel   = "member_cluster"
	operationResultLabel = "operationResult"
	metricTypeLabel      = "metricType"
)

// Karmada's buckets: 1ms to about 2s (the pipeline), 10ms to about 20s
// (FederatedHPA, which reads members' metrics).
var (
	pipelineBuckets = k8smetrics.ExponentialBuckets(0.001, 2, 12)
	hpaBuckets      = k8smetrics.ExponentialBuckets(0.01, 2, 12)
)

func histogram(name, help string, buckets []float64, labels ...string) *k8smetrics.HistogramVec {
	return k8smetrics.NewHistogramVec(&k8smetrics.HistogramOpts{Name: name, Help: help, Buckets: buckets, StabilityLevel: k8smetrics.ALPHA}, labels)
}

func counter(name, help string, labels ...string) *k8smetrics.CounterVec {
	return k8smetrics.NewCounterVec(&k8smetrics.CounterOpts{Name: name, Help: help, StabilityLevel: k8smetrics.ALPHA}, labels)
}

var (
	matchPolicy = histogram(ResourceMatchPolicyDuration,
		"Duration in seconds to find a matched PropagationPolicy or ClusterPropagationPolicy for the resource templates.", pipelineBuckets)
	applyPolicy = histogram(ResourceApplyPolicyDuration,
		"Duration in seconds to apply a PropagationPolicy or ClusterPropagationPolicy for the resource templates. By the result, 'error' means a resource template failed to apply the policy. Otherwise 'success'.",
		pipelineBuckets, resultLabel)
	applyPolicyAttempts = counter(PolicyApplyAttemptsTotal,
		"Number of attempts to be applied for a PropagationPolicy or ClusterPropagationPolicy. By the result, 'error' means a resource template failed to apply the policy. Otherwise 'success'.",
		resultLabel)
	syncWork = histogram(BindingSyncWorkDuration,
		"Duration in seconds to sync works for ResourceBinding and ClusterResourceBinding objects. By the result, 'error' means a binding failed to sync works. Otherwise 'success'.",
		pipelineBuckets, resultLabel)
	syncWorkload = histogram(WorkSyncWorkloadDuration,
		"Duration in seconds to sync the workload to a target cluster. By the result, 'error' means a work failed to sync workloads. Otherwise 'success'.",
		pipelineBuckets, resultLabel)
	createResource = counter(CreateResourceToCluster,
		"Number of creation operations against a target member cluster. The 'result' label indicates outcome ('success' or 'error'). Labels 'apiversion', 'kind', and 'member_cluster' specify the resource type, API version, and target cluster respectively.",
		resultLabel, apiVersionLabel, kindLabel, memberClusterLabel)
	updateResource = counter(UpdateResourceToCluster,
		"Number of updating operation of the resource to a target member cluster. By the result, 'error' means a resource updated failed. Otherwise 'success'. member_cluster means the target member cluster. operationResult means the result of the update operation.",
		resultLabel, apiVersionLabel, kindLabel, memberClusterLabel, operationResultLabel)
	deleteResource = counter(DeleteResourceFromCluster,
		"Number of deletion operations against a target member cluster. The 'result' label indicates outcome ('success' or 'error'). Labels 'apiversion', 'kind', and 'member_cluster' specify the resource's API version, type, and source cluster respectively.",
		resultLabel, apiVersionLabel, kindLabel, memberClusterLabel)
	preemption = counter(PolicyPreemptionTotal,
		"Number of preemption for the resource template. By the result, 'error' means a resource template failed to be preempted by other propagation policies. Otherwise 'success'.",
		resultLabel)
	federatedHPA = histogram(FederatedHPAProcessDuration,
		"Duration in seconds to process a FederatedHPA. By the result, 'error' means a FederatedHPA failed to be processed. Otherwise 'success'.",
		hpaBuckets, resultLabel)
	federatedHPAPull = histogram(FederatedHPAPullMetricsDuration,
		"Duration in seconds taken by the FederatedHPA to pull metrics. By the result, 'error' means the FederatedHPA failed to pull the metrics. Otherwise 'success'.",
		hpaBuckets, resultLabel, metricTypeLabel)
	cronFederatedHPA = histogram(CronFederatedHPAProcessDuration,
		"Duration in seconds to process a CronFederatedHPA. By the result, 'error' means a CronFederatedHPA failed to be processed. Otherwise 'success'.",
		pipelineBuckets, resultLabel)
)

// ObserveMatchPolicy records how long finding a template's policy took.
func ObserveMatchPolicy(start time.Time) {
	matchPolicy.WithLabelValues().Observe(time.Since(start).Seconds())
}

// ObserveApplyPolicy records one attempt to apply a policy to a template
// (claim and binding) and how long it took.
func ObserveApplyPolicy(err error, start time.Time) {
	applyPolicy.WithLabelValues(resultOf(err)).Observe(time.Since(start).Seconds())
	applyPolicyAttempts.WithLabelValues(resultOf(err)).Inc()
}

// CountPolicyPreemption records one preemption of a template by a policy.
func CountPolicyPreemption(err error) {
	preemption.WithLabelValues(resultOf(err)).Inc()
}

// ObserveSyncWork records how long writing a binding's Works took.
func ObserveSyncWork(err error, start time.Time) {
	syncWork.WithLabelValues(resultOf(err)).Observe(time.Since(start).Seconds())
}

// ObserveSyncWorkload records how long applying a Work's manifests to its
// member took.
func ObserveSyncWorkload(err error, start time.Time) {
	syncWorkload.WithLabelValues(resultOf(err)).Observe(time.Since(start).Seconds())
}

// CountCreateResource records one create of a resource in a member.
func CountCreateResource(err error, apiVersion, kind, cluster string) {
	createResource.WithLabelValues(resultOf(err), apiVersion, kind, cluster).Inc()
}

// CountUpdateResource records one update of a resource in a member;
// operationResult says what it changed (Karmada's controllerutil
// OperationResult: "updated", "unchanged").
func CountUpdateResource(err error, apiVersion, kind, cluster, operationResult string) {
	updateResource.WithLabelValues(resultOf(err), apiVersion, kind, cluster, operationResult).Inc()
}

// CountDeleteResource records one delete of a resource from a member.
func CountDeleteResource(err error, apiVersion, kind, cluster string) {
	deleteResource.WithLabelValues(resultOf(err), apiVersion, kind, cluster).Inc()
}

// ObserveFederatedHPA records how long one FederatedHPA computation took.
func ObserveFederatedHPA(err error, start time.Time) {
	federatedHPA.WithLabelValues(resultOf(err)).Observe(time.Since(start).Seconds())
}

// ObserveFederatedHPAPullMetrics records how long reading one metric of a
// FederatedHPA took; metricType is the metric's source type (Resource,
// Pods, Object, External, ContainerResource).
func ObserveFederatedHPAPullMetrics(err error, metricType string, start time.Time) {
	federatedHPAPull.WithLabelValues(resultOf(err), metricType).Observe(time.Since(start).Seconds())
}

// ObserveCronFederatedHPA records how long one CronFederatedHPA run took.
func ObserveCronFederatedHPA(err error, start time.Time) {
	cronFederatedHPA.WithLabelValues(resultOf(err)).Observe(time.Since(start).Seconds())
}
