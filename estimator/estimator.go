package estimator

import (
	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// MaxReplicas returns how many more replicas described by req a member can
// run: NodeReplicas over its nodes and pods, lowered to QuotaReplicas when
// a quota of the replicas' namespace limits them. quotas are the
// namespace's (none when quotas are not to be considered).
func MaxReplicas(nodes []*corev1.Node, pods []*corev1.Pod, quotas []*corev1.ResourceQuota, req *workv1alpha2.ReplicaRequirements) int64 {
	return MaxReplicasAssuming(nodes, pods, quotas, req, Assumed{})
}

// MaxReplicasAssuming is MaxReplicas once what the scheduler has assigned
// the member and its pods do not show yet is taken: from the nodes'
// summed room (NodeSum.Replicas) and, for the replicas' namespace, from
// its quotas (QuotaReplicasAssuming).
func MaxReplicasAssuming(nodes []*corev1.Node, pods []*corev1.Pod, quotas []*corev1.ResourceQuota, req *workv1alpha2.ReplicaRequirements, assumed Assumed) int64 {
	n := nodeSum(nodes, pods, req).Replicas(assumed.Nodes)
	if q, ok := QuotaReplicasAssuming(quotas, req, assumed.Quota); ok {
		n = min(n, q)
	}
	return n
}
