// Package scheduler places ResourceBindings and ClusterResourceBindings on
// member clusters, as karmada-scheduler does (docs/compatibility.md,
// Scheduling). The decision itself is made by the pure package placement
// (filter, score, select, divide); this controller reads the caches, gives
// placement the binding, the clusters, its workload affinity peers and the
// accurate estimator over the members' own nodes, pods and quotas, and writes
// the decision.
//
// It owns spec.clusters, the applied-placement annotation and the
// scheduler's part of the status (schedulerObservedGeneration,
// schedulerObservingAffinityName, lastScheduledTime and the Scheduled
// condition). A decision that changes the result writes it with the
// status in one request, through the bindings' scheduling subresource
// (apis/work/v1alpha2.SchedulingSubresource); one that changes only the
// status writes it through the status subresource. It writes nothing when
// the decision has not changed.
//
// What it assigns a member and the member does not show yet is assumed
// there, in memory, and the estimator takes it as used, so a burst of
// bindings does not overcommit a member before its pods appear (Karmada's
// scheduling overcommit protection; assumed.go).
//
// It does not own the rest of the binding (the detector), the Works (the
// binding controller) nor the aggregated status (the status controller).
package scheduler
