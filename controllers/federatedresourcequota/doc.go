// Package federatedresourcequota carries out the static assignments of
// FederatedResourceQuotas (docs/compatibility.md, Quotas), as Karmada's
// federatedResourceQuotaSync and federatedResourceQuotaStatus controllers do.
//
// The sync controller turns each spec.staticAssignments[i] into a
// ResourceQuota of the same name and namespace as the quota, with
// spec.hard = hard, in cluster clusterName: a Work named after the quota
// (names.WorkName("ResourceQuota", name, namespace)) in the cluster's
// execution namespace, labelled federatedresourcequota.karmada.io/namespace
// and /name. The Works of clusters no longer assigned are deleted, and so
// are all of a quota's Works once the quota is gone (found by those labels,
// as Karmada does; a Work left by a quota deleted while the controller was
// down is found when the Work informer lists it at start).
//
// The status controller collects the member ResourceQuotas' status that the
// execution controller reflects into those Works into
// status.aggregatedStatus (per cluster hard and used), and sets
// status.overall (= spec.overall) and status.overallUsed. For a quota with
// static assignments, overallUsed is the sum of what the members report;
// for one without, it is what the namespace's ResourceBindings' scheduling
// results use (placement.BindingUsage: Σ spec.clusters[].replicas × the
// replica requirements, per component for a workload of components) of the
// resources spec.overall names, as Karmada's FederatedQuotaEnforcement
// counts it. It follows the bindings' informer, so it moves as soon as a
// scheduling result is written, not when the members report.
//
// Neither enforces spec.overall: flotilla-apiserver refuses the
// ResourceBinding writes that would exceed it (registry/work, quotaCheck),
// with the same count. Neither applies the Works to members (the execution
// controller does).
package federatedresourcequota
