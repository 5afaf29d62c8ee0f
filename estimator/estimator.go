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
	n := NodeReplicas(nodes, pods, req)
	if q, ok := QuotaReplicas(quotas, req); ok {
		n = min(n, q)
	}
	return n
}
