// Package eviction moves workloads off clusters: the taint manager
// (Karmada's taintManager) evicts a binding from a cluster whose NoExecute
// taints its placement does not tolerate, leaving a GracefulEvictionTask;
// the graceful eviction controller (gracefulEviction) ends each task once
// the workload is healthy where it was rescheduled, or its grace period is
// over, and the binding controller then removes the old cluster's Work.
// The decisions are failover's; these controllers read caches and write
// one patch of the binding per decision.
package eviction
