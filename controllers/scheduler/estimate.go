package scheduler

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// maxAvailable is Karmada's general estimator: how many more replicas with
// req a cluster can run, from its resourceSummary. Pods are bounded by
// allocatable - allocated - allocating pods, then by every requested
// resource: floor(free / request). A cluster without a summary can run
// none.
func maxAvailable(c *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) int64 {
	rs := c.Status.ResourceSummary
	if rs == nil {
		return 0
	}
	pods := free(rs, corev1.ResourcePods)
	n := pods.Value()
	if n <= 0 {
		return 0
	}
	if req == nil {
		return n
	}
	for name, q := range req.ResourceRequest {
		if q.IsZero() {
			continue
		}
		f := free(rs, name)
		var fit int64
		if name == corev1.ResourceCPU {
			fit = f.MilliValue() / q.MilliValue()
		} else {
			fit = f.Value() / max(q.Value(), 1)
		}
		n = min(n, max(fit, 0))
	}
	return n
}

func free(rs *clusterv1alpha1.ResourceSummary, name corev1.ResourceName) resource.Quantity {
	q := rs.Allocatable[name].DeepCopy()
	if a, ok := rs.Allocated[name]; ok {
		q.Sub(a)
	}
	if a, ok := rs.Allocating[name]; ok {
		q.Sub(a)
	}
	return q
}

// availableReplicas returns, per candidate, what it can still run plus
// what the binding already holds there (those replicas may already count
// as allocated), capped at MaxInt32. A binding without replicas (not a
// workload) fits everywhere.
func availableReplicas(candidates []*clusterv1alpha1.Cluster, spec *workv1alpha2.ResourceBindingSpec) map[string]int64 {
	out := make(map[string]int64, len(candidates))
	held := assigned(spec.Clusters)
	for _, c := range candidates {
		if spec.Replicas == 0 && spec.ReplicaRequirements == nil {
			out[c.Name] = math.MaxInt32
			continue
		}
		n := maxAvailable(c, spec.ReplicaRequirements) + int64(held[c.Name])
		if n >= math.MaxInt32 {
			// No real bound is known: weigh the cluster as able to run
			// them all, as Karmada does with an unknown estimate.
			n = int64(spec.Replicas)
		}
		out[c.Name] = n
	}
	return out
}

// assigned maps each scheduled cluster to its replicas.
func assigned(clusters []workv1alpha2.TargetCluster) map[string]int32 {
	out := make(map[string]int32, len(clusters))
	for _, t := range clusters {
		out[t.Name] = t.Replicas
	}
	return out
}
