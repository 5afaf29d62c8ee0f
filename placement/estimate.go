package placement

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// maxAvailable is Karmada's general estimator: how many more replicas with
// req a cluster can run, from its resourceSummary. Pods are bounded by
// allocatable - allocated - allocating pods; then, when the cluster reports
// how many nodes it has per grade of its resource models and the models
// cover every requested resource, by the models (see byModels); otherwise
// by every requested resource of the whole cluster: floor(free / request).
// A cluster without a summary can run none.
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
	if m, ok := byModels(c, req); ok {
		return min(n, m)
	}
	for name, q := range req.ResourceRequest {
		if q.IsZero() {
			continue
		}
		n = min(n, fits(name, free(rs, name), q))
	}
	return n
}

// fits is how many times need fits in have of resource name: CPU in
// millicores, other resources in whole units; never negative.
func fits(name corev1.ResourceName, have, need resource.Quantity) int64 {
	var n int64
	if name == corev1.ResourceCPU {
		n = have.MilliValue() / max(need.MilliValue(), 1)
	} else {
		n = have.Value() / max(need.Value(), 1)
	}
	return max(n, 0)
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
//
// estimate, when not nil, is a second estimator (the members' own nodes,
// pods and quotas): the smaller of the two answers counts, as Karmada
// takes the minimum over its estimators.
func availableReplicas(candidates []*clusterv1alpha1.Cluster, spec *workv1alpha2.ResourceBindingSpec, estimate Estimator) map[string]int64 {
	out := make(map[string]int64, len(candidates))
	held := assigned(spec.Clusters)
	for _, c := range candidates {
		if spec.Replicas == 0 && spec.ReplicaRequirements == nil {
			out[c.Name] = math.MaxInt32
			continue
		}
		n := maxAvailable(c, spec.ReplicaRequirements)
		if estimate != nil {
			if m, ok := estimate(c, spec.ReplicaRequirements); ok {
				n = min(n, m)
			}
		}
		n += int64(held[c.Name])
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

// byModels estimates from the cluster's resource models, which see nodes
// rather than the cluster's sum (100 free CPUs over 100 one-CPU nodes fit
// no two-CPU replica). A node of a grade is assumed to have the grade's
// minimum of each resource free; grades whose minimum is below the request
// of some resource fit none; each node of the others fits
// min over resources of floor(minimum / request). ok is false when the
// cluster reports no modelings or a requested resource is not modelled:
// the summary estimate applies then.
func byModels(c *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) (int64, bool) {
	models, counts := c.Spec.ResourceModels, c.Status.ResourceSummary.AllocatableModelings
	if len(models) == 0 || len(counts) != len(models) {
		return 0, false
	}
	// mins[resource][grade index]
	mins := map[corev1.ResourceName][]resource.Quantity{}
	for _, m := range models {
		for _, r := range m.Ranges {
			mins[r.Name] = append(mins[r.Name], r.Min)
		}
	}
	for name, q := range req.ResourceRequest {
		if q.Sign() > 0 && len(mins[name]) != len(models) {
			return 0, false
		}
	}
	var total int64
	for i := range models {
		if counts[i].Count == 0 {
			continue
		}
		perNode := int64(math.MaxInt64)
		for name, q := range req.ResourceRequest {
			if q.Sign() <= 0 {
				continue
			}
			have := mins[name][i]
			if name == corev1.ResourceCPU {
				perNode = min(perNode, have.MilliValue()/q.MilliValue())
			} else {
				perNode = min(perNode, have.Value()/max(q.Value(), 1))
			}
		}
		if perNode == math.MaxInt64 {
			// Nothing requested: the pod bound decides.
			return math.MaxInt64, true
		}
		total += int64(counts[i].Count) * perNode
	}
	return total, true
}
