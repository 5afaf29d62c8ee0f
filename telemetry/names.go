package telemetry

// The label values Karmada uses for the result of an operation.
const (
	ResultSuccess = "success"
	ResultError   = "error"
	// resultScheduled is the scheduler's success (Karmada's).
	resultScheduled = "scheduled"
)

// The metric names, Karmada's. Each is declared here once; Names lists them
// for the docs, the dashboard's test and the e2e test.
const (
	ClusterReadyState             = "cluster_ready_state"
	ClusterNodeNumber             = "cluster_node_number"
	ClusterReadyNodeNumber        = "cluster_ready_node_number"
	ClusterMemoryAllocatableBytes = "cluster_memory_allocatable_bytes"
	ClusterCPUAllocatableNumber   = "cluster_cpu_allocatable_number"
	ClusterPodAllocatableNumber   = "cluster_pod_allocatable_number"
	ClusterMemoryAllocatedBytes   = "cluster_memory_allocated_bytes"
	ClusterCPUAllocatedNumber     = "cluster_cpu_allocated_number"
	ClusterPodAllocatedNumber     = "cluster_pod_allocated_number"
	ClusterSyncStatusDuration     = "cluster_sync_status_duration_seconds"

	ResourceMatchPolicyDuration     = "resource_match_policy_duration_seconds"
	ResourceApplyPolicyDuration     = "resource_apply_policy_duration_seconds"
	PolicyApplyAttemptsTotal        = "policy_apply_attempts_total"
	BindingSyncWorkDuration         = "binding_sync_work_duration_seconds"
	WorkSyncWorkloadDuration        = "work_sync_workload_duration_seconds"
	CreateResourceToCluster         = "create_resource_to_cluster"
	UpdateResourceToCluster         = "update_resource_to_cluster"
	DeleteResourceFromCluster       = "delete_resource_from_cluster"
	PolicyPreemptionTotal           = "policy_preemption_total"
	FederatedHPAProcessDuration     = "federatedhpa_process_duration_seconds"
	FederatedHPAPullMetricsDuration = "federatedhpa_pull_metrics_duration_seconds"
	CronFederatedHPAProcessDuration = "cronfederatedhpa_process_duration_seconds"

	// schedulerSubsystem prefixes the scheduler's metrics (Karmada's).
	schedulerSubsystem             = "karmada_scheduler"
	SchedulerE2ESchedulingDuration = schedulerSubsystem + "_e2e_scheduling_duration_seconds"
	SchedulerScheduleAttemptsTotal = schedulerSubsystem + "_schedule_attempts_total"
	SchedulerAlgorithmDuration     = schedulerSubsystem + "_scheduling_algorithm_duration_seconds"
	SchedulerQueueIncomingBindings = schedulerSubsystem + "_queue_incoming_bindings_total"
	BuildInfo                      = "karmada_build_info"
)

// Names are the metrics this package declares, in the order of the docs.
func Names() []string {
	return []string{
		ClusterReadyState, ClusterNodeNumber, ClusterReadyNodeNumber,
		ClusterMemoryAllocatableBytes, ClusterCPUAllocatableNumber, ClusterPodAllocatableNumber,
		ClusterMemoryAllocatedBytes, ClusterCPUAllocatedNumber, ClusterPodAllocatedNumber,
		ClusterSyncStatusDuration,
		ResourceMatchPolicyDuration, ResourceApplyPolicyDuration, PolicyApplyAttemptsTotal,
		BindingSyncWorkDuration, WorkSyncWorkloadDuration,
		CreateResourceToCluster, UpdateResourceToCluster, DeleteResourceFromCluster,
		PolicyPreemptionTotal,
		FederatedHPAProcessDuration, FederatedHPAPullMetricsDuration, CronFederatedHPAProcessDuration,
		SchedulerE2ESchedulingDuration, SchedulerScheduleAttemptsTotal, SchedulerAlgorithmDuration, SchedulerQueueIncomingBindings,
		BuildInfo,
	}
}

// resultOf is Karmada's result label of err.
func resultOf(err error) string {
	if err != nil {
		return ResultError
	}
	return ResultSuccess
}
