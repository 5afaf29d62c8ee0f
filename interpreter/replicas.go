package interpreter

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	resourcehelper "k8s.io/component-helpers/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// workloadReplicas reads spec.replicas (nil => 0) and the pod template
// requirements of a Deployment, ReplicaSet or StatefulSet.
func (n *Native) workloadReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	replicas, _, err := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if err != nil {
		return 0, nil, fmt.Errorf("reading spec.replicas: %w", err)
	}
	req, err := n.templateRequirements(obj, "spec", "template", "spec")
	if err != nil {
		return 0, nil, err
	}
	return int32(replicas), req, nil
}

// jobReplicas reads spec.parallelism (nil => 0) capped by spec.completions.
func (n *Native) jobReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	parallelism, _, err := unstructured.NestedInt64(obj.Object, "spec", "parallelism")
	if err != nil {
		return 0, nil, fmt.Errorf("reading spec.parallelism: %w", err)
	}
	completions, found, err := unstructured.NestedInt64(obj.Object, "spec", "completions")
	if err != nil {
		return 0, nil, fmt.Errorf("reading spec.completions: %w", err)
	}
	if found && completions < parallelism {
		parallelism = completions
	}
	req, err := n.templateRequirements(obj, "spec", "template", "spec")
	if err != nil {
		return 0, nil, err
	}
	return int32(parallelism), req, nil
}

// podReplicas: a Pod is one replica of itself.
func (n *Native) podReplicas(obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	req, err := n.templateRequirements(obj, "spec")
	if err != nil {
		return 0, nil, err
	}
	return 1, req, nil
}

// templateRequirements reads the requirements of the pod spec at path.
func (n *Native) templateRequirements(obj *unstructured.Unstructured, path ...string) (*workv1alpha2.ReplicaRequirements, error) {
	spec, err := podSpecAt(obj, path...)
	if err != nil {
		return nil, err
	}
	req, priorityClass, err := SpecRequirements(spec)
	if err != nil {
		return nil, err
	}
	if req != nil {
		// Kept only with the ResourceQuotaEstimate gate (QuotaScoped).
		req.Namespace = obj.GetNamespace()
		req.PriorityClassName = priorityClass
	}
	return req, nil
}

// PodRequirements are the requirements of one replica of a pod: its node
// claim and effective resource requests; nil when it has neither. The Lua
// helper kube.accuratePodRequirements returns them.
func PodRequirements(pod *corev1.Pod) *workv1alpha2.ReplicaRequirements {
	claim := nodeClaim(&pod.Spec)
	request := PodRequests(pod)
	if claim == nil && request == nil {
		return nil
	}
	return &workv1alpha2.ReplicaRequirements{NodeClaim: claim, ResourceRequest: request}
}

// nodeClaim collects node selector, tolerations and required node affinity;
// nil when all are empty.
func nodeClaim(spec *corev1.PodSpec) *workv1alpha2.NodeClaim {
	claim := &workv1alpha2.NodeClaim{
		NodeSelector: spec.NodeSelector,
		Tolerations:  spec.Tolerations,
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if claim.HardNodeAffinity == nil && len(claim.NodeSelector) == 0 && len(claim.Tolerations) == 0 {
		return nil
	}
	return claim
}

// PodRequests returns the effective requests of one pod, computed as the
// kube-scheduler does: the sum of the containers (plus restartable init
// containers), the max with each init container, plus the pod overhead.
// It returns nil when nothing is requested.
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for name, q := range reqs {
		if q.IsZero() {
			delete(reqs, name)
		}
	}
	if len(reqs) == 0 {
		return nil
	}
	return reqs
}

// reviseSpecField returns a ReviseReplica hook setting spec.<field>.
func reviseSpecField(field string) reviseFunc {
	return func(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
		out := obj.DeepCopy()
		if err := unstructured.SetNestedField(out.Object, replicas, "spec", field); err != nil {
			return nil, fmt.Errorf("setting spec.%s: %w", field, err)
		}
		return out, nil
	}
}
