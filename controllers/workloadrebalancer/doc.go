// Package workloadrebalancer runs WorkloadRebalancers (apps.karmada.io):
// for each workload a rebalancer names, it sets
// spec.rescheduleTriggeredAt of the workload's (Cluster)ResourceBinding to
// the rebalancer's creation time, which makes the scheduler place the
// workload afresh, and reports each workload's result in
// status.observedWorkloads (Successful, or Failed with reason
// ReferencedBindingNotFound). Once every workload has a result the
// rebalancer gets status.finishTime, and with ttlSecondsAfterFinished it is
// deleted that long after. Workloads added to the spec later are handled
// in turn; ones removed keep their entry only if they succeeded. The
// status arithmetic (Observe) is pure.
package workloadrebalancer
