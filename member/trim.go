package member

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Trim keeps of pods, nodes and ResourceQuotas what the metrics adapter,
// the HPA arithmetic and the replica estimate (MaxReplicas) read:
//   - pods: identity, labels, node name, phase, conditions, start time, and
//     what their requests are computed from (every container's and init
//     container's requests and restart policy, pod-level resources, overhead);
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
		return &corev1.Pod{
			TypeMeta:   o.TypeMeta,
			ObjectMeta: trimMeta(o.ObjectMeta),
			Spec: corev1.PodSpec{
				Containers:     trimContainers(o.Spec.Containers),
				InitContainers: trimContainers(o.Spec.InitContainers),
				NodeName:       o.Spec.NodeName,
				Resources:      o.Spec.Resources,
				Overhead:       o.Spec.Overhead,
			},
			Status: corev1.PodStatus{Phase: o.Status.Phase, Conditions: o.Status.Conditions, StartTime: o.Status.StartTime},
		}, nil
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

// trimContainers keeps of containers their names, requests and restart
// policies: a pod's requests are computed from them (init containers
// raise them to their largest, restartable ones, sidecars, add up).
func trimContainers(cs []corev1.Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, RestartPolicy: c.RestartPolicy,
			Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}}
	}
	return out
}

func trimMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Labels: m.Labels, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp}
}
