// Package scheduler places ResourceBindings and ClusterResourceBindings on
// member clusters, as karmada-scheduler does (API-SPEC §10.3): it filters
// the clusters (API enablement, taints, cluster affinity or the ordered
// clusterAffinities, spread constraint fields, evictions), orders them
// (locality, available replicas, name), selects them under the spread
// constraints and divides the replicas (Duplicated, static weights,
// dynamic weights by available replicas, Aggregated; Webster's method with
// Karmada's deterministic tie-break).
//
// It owns spec.clusters, the applied-placement annotation and the
// scheduler's part of the status (schedulerObservedGeneration,
// schedulerObservingAffinityName, lastScheduledTime and the Scheduled
// condition), and writes them in one request per decision. It writes
// nothing when the decision has not changed.
//
// It does not own the rest of the binding (the detector), the Works (the
// binding controller) nor the aggregated status (the status controller).
package scheduler
