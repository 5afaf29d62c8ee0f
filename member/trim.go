package member

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Trim keeps of pods, nodes and ResourceQuotas what the metrics adapter,
// the HPA arithmetic, cluster status, the replica estimate (MaxReplicas)
// and the descheduler read:
//   - pods become a compact Pod: identity, labels, node name, phase,
//     readiness, start time, since when they are unschedulable, and their
//     requests (per container, pod-level, and the total a node gives them);
//   - nodes: identity, labels, unschedulable, taints, conditions, capacity
//     and allocatable;
//   - ResourceQuotas: identity, hard limits and scopes, and status hard and
//     used.
//
// Everything else (managed fields, annotations, volumes, images, container
// statuses, node images) is dropped before it reaches the cache.
func Trim(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return NewPod(o), nil
	case *corev1.Node:
		return &corev1.Node{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: trimMeta(o.ObjectMeta),
			Spec:       corev1.NodeSpec{Unschedulable: o.Spec.Unschedulable, Taints: o.Spec.Taints},
			Status:     corev1.NodeStatus{Conditions: o.Status.Conditions, Capacity: o.Status.Capacity, Allocatable: o.Status.Allocatable},
		}, nil
	case *corev1.ResourceQuota:
		return &corev1.ResourceQuota{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: trimMeta(o.ObjectMeta),
			Spec:       corev1.ResourceQuotaSpec{Hard: o.Spec.Hard, Scopes: o.Spec.Scopes, ScopeSelector: o.Spec.ScopeSelector},
			Status:     corev1.ResourceQuotaStatus{Hard: o.Status.Hard, Used: o.Status.Used},
		}, nil
	}
	return obj, nil
}

func trimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: m.Labels, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}
}
