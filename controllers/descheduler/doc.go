// Package descheduler is Karmada's karmada-descheduler as a controller:
// every --descheduling-interval it looks at the ResourceBindings of
// Deployments whose placement divides replicas by what the clusters can
// run (Divided, Aggregated or with a dynamicWeight), and for each cluster
// where fewer replicas are Ready than assigned it counts the workload's
// pods the member's scheduler has found no node for (PodScheduled False,
// reason Unschedulable) for longer than --unschedulable-threshold. Those
// replicas are taken off the cluster's spec.clusters entry in one patch
// of the binding, and the scheduler's scale-up places them in clusters
// with room. DescheduleBindingSucceed or DescheduleBindingFailed is
// recorded on the binding and its template.
//
// Beyond Karmada, it never lowers a cluster below the replicas Ready
// there, it leaves a cluster that is not Ready, or whose pods cannot be
// counted, as it is, and it waits while the binding's scheduling is
// pending or a GracefulEvictionTask is open. The decision is
// failover.Deschedule; the pods are the member hub's (member.Hub), and the
// selector is the member Deployment's spec.selector.
//
// It owns nothing of its own: it lowers spec.clusters entries the
// scheduler owns, as Karmada's descheduler does, and the scheduler then
// owns the result again.
package descheduler
