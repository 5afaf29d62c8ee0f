package telemetry

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	k8smetrics "k8s.io/component-base/metrics"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// clusterLabel is Karmada's label of the cluster gauges.
const clusterLabel = "cluster_name"

func clusterGauge(name, help string) *k8smetrics.GaugeVec {
	return k8smetrics.NewGaugeVec(&k8smetrics.GaugeOpts{Name: name, Help: help, StabilityLevel: k8smetrics.ALPHA}, []string{clusterLabel})
}

var (
	clusterReady             = clusterGauge(ClusterReadyState, "State of the cluster(1 if ready, 0 otherwise).")
	clusterNodes             = clusterGauge(ClusterNodeNumber, "Number of nodes in the cluster.")
	clusterReadyNodes        = clusterGauge(ClusterReadyNodeNumber, "Number of ready nodes in the cluster.")
	clusterMemoryAllocatable = clusterGauge(ClusterMemoryAllocatableBytes, "Allocatable cluster memory resource in bytes.")
	clusterCPUAllocatable    = clusterGauge(ClusterCPUAllocatableNumber, "Number of allocatable CPU in the cluster.")
	clusterPodAllocatable    = clusterGauge(ClusterPodAllocatableNumber, "Number of allocatable pods in the cluster.")
	clusterMemoryAllocated   = clusterGauge(ClusterMemoryAllocatedBytes, "Allocated cluster memory resource in bytes.")
	clusterCPUAllocated      = clusterGauge(ClusterCPUAllocatedNumber, "Number of allocated CPU in the cluster.")
	clusterPodAllocated      = clusterGauge(ClusterPodAllocatedNumber, "Number of allocated pods in the cluster.")

	clusterSyncStatus = k8smetrics.NewHistogramVec(&k8smetrics.HistogramOpts{
		Name: ClusterSyncStatusDuration, Help: "Duration in seconds for syncing the status of the cluster once.",
		Buckets: k8smetrics.DefBuckets, StabilityLevel: k8smetrics.ALPHA,
	}, []string{clusterLabel})

	clusterGauges = []*k8smetrics.GaugeVec{clusterReady, clusterNodes, clusterReadyNodes,
		clusterMemoryAllocatable, clusterCPUAllocatable, clusterPodAllocatable,
		clusterMemoryAllocated, clusterCPUAllocated, clusterPodAllocated}
)

// RecordClusterStatus sets the cluster gauges from a computed status, as
// Karmada does: the Ready condition, and the node and resource summaries
// when the status has them (a summary not collected keeps its last value).
func RecordClusterStatus(name string, status *clusterv1alpha1.ClusterStatus) {
	ready := 0.0
	if meta.IsStatusConditionTrue(status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		ready = 1
	}
	clusterReady.WithLabelValues(name).Set(ready)
	if n := status.NodeSummary; n != nil {
		clusterNodes.WithLabelValues(name).Set(float64(n.TotalNum))
		clusterReadyNodes.WithLabelValues(name).Set(float64(n.ReadyNum))
	}
	r := status.ResourceSummary
	if r == nil {
		return
	}
	set := func(list corev1.ResourceList, memory, cpu, pods *k8smetrics.GaugeVec) {
		if list == nil {
			return
		}
		memory.WithLabelValues(name).Set(list.Memory().AsApproximateFloat64())
		cpu.WithLabelValues(name).Set(list.Cpu().AsApproximateFloat64())
		pods.WithLabelValues(name).Set(list.Pods().AsApproximateFloat64())
	}
	set(r.Allocatable, clusterMemoryAllocatable, clusterCPUAllocatable, clusterPodAllocatable)
	set(r.Allocated, clusterMemoryAllocated, clusterCPUAllocated, clusterPodAllocated)
}

// ObserveClusterSyncStatus records how long one status collection of the
// cluster took, from start.
func ObserveClusterSyncStatus(name string, start time.Time) {
	clusterSyncStatus.WithLabelValues(name).Observe(time.Since(start).Seconds())
}

// DeleteCluster removes the series of a cluster that no longer exists.
func DeleteCluster(name string) {
	l := map[string]string{clusterLabel: name}
	for _, g := range clusterGauges {
		g.Delete(l)
	}
	clusterSyncStatus.Delete(l)
}
