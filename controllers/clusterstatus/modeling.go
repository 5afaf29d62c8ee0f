package clusterstatus

import (
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// allocatableModelings counts the member's nodes per grade of the
// cluster's resource models, as Karmada's cluster status controller does:
// a node's free resources (allocatable minus the requests of its pods that
// have not finished) fall in one range of each modelled resource, and the
// node's grade is the lowest of those ranges. A node with no pod slot left
// is not counted. Nil when there are no models or no nodes.
func allocatableModelings(models []clusterv1alpha1.ResourceModel, nodes []*corev1.Node, used map[string]corev1.ResourceList, podCount map[string]int64) []clusterv1alpha1.AllocatableModeling {
	if len(models) == 0 || len(nodes) == 0 {
		return nil
	}
	out := make([]clusterv1alpha1.AllocatableModeling, len(models))
	for i, m := range models {
		out[i].Grade = m.Grade
	}
	for _, n := range nodes {
		if pods, ok := n.Status.Allocatable[corev1.ResourcePods]; ok && pods.Value()-podCount[n.Name] <= 0 {
			continue
		}
		free := corev1.ResourceList{}
		for name, q := range n.Status.Allocatable {
			f := q.DeepCopy()
			if u, ok := used[n.Name][name]; ok {
				f.Sub(u)
			}
			free[name] = f
		}
		if i := gradeIndex(models, free); i >= 0 {
			out[i].Count++
		}
	}
	return out
}

// gradeIndex returns the index of the model a node with free resources
// belongs to: for each resource of the models, the last model whose
// minimum the node reaches; the lowest of those. -1 when the node does not
// reach the first model (a resource over-committed below zero).
func gradeIndex(models []clusterv1alpha1.ResourceModel, free corev1.ResourceList) int {
	index := len(models) - 1
	for r := range models[0].Ranges {
		name := models[0].Ranges[r].Name
		value := free[name] // a resource the node lacks counts as zero
		last := -1
		for i := range models {
			if r < len(models[i].Ranges) && models[i].Ranges[r].Min.Cmp(value) <= 0 {
				last = i
			}
		}
		index = min(index, last)
	}
	return index
}
