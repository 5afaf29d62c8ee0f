// Package estimator computes how many more replicas of a workload a member
// cluster can run, from the member's own nodes, pods and ResourceQuotas: the
// arithmetic of Karmada's accurate scheduler estimator
// (karmada-scheduler-estimator, pkg/estimator/server), run in process.
//
// It owns the arithmetic only. It reads no API server and keeps no cache:
// callers hand it the objects (member.Hub keeps them per member), and
// the scheduler decides how the result combines with its other estimates.
//
// Two estimates are made and the smaller wins (MaxReplicas):
//
//   - NodeReplicas: every Ready node the replica may be placed on (node
//     selector, required node affinity, NoSchedule/NoExecute taints and
//     spec.unschedulable checked against the replica's node claim) fits
//     min(free pod slots, floor(free_r/request_r) for every requested r),
//     where free = allocatable minus the requests of the non-terminal pods
//     bound to the node; the estimate is the sum over nodes.
//   - QuotaReplicas: every ResourceQuota of the namespace that applies to the
//     replica allows floor((hard-used)/per-replica) more of each resource it
//     limits and a replica consumes; the estimate is the minimum.
//
// What the scheduler has assigned a member and the member does not show
// as pods yet (Assumed, kept by the package assumed) is taken from both
// (MaxReplicasAssuming): from the nodes' summed free room, as no one knows
// yet which nodes those pods will take (NodeSum.Replicas), and, in the
// replicas' namespace, as used in its quotas (QuotaReplicasAssuming).
package estimator
