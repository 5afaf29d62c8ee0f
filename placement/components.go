package placement

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// A binding with spec.components (a workload of several pod templates, as
// GetComponents reads it, e.g. a Flink job manager and its task managers)
// is placed as a whole, as Karmada's MultiplePodTemplatesScheduling does:
// what a cluster can take is counted in sets, a set being every component
// with its replicas; a cluster that cannot host one set is no candidate;
// every selected cluster gets one whole set (spec.clusters[*].components)
// and no component is ever divided among clusters. Under Divided, as in
// Karmada, the components are not divided either: a policy that wants the
// workload in one cluster says so with a cluster spread constraint of
// maxGroups 1, which picks the cluster that can host the most sets.

// SetEstimator tells how many more whole sets of components a cluster can
// run by some other measure than its resource summary (the set estimate of
// Karmada's scheduler-estimator, MaxAvailableComponentSets); ok is false
// when it does not know.
type SetEstimator func(cluster *clusterv1alpha1.Cluster, components []workv1alpha2.Component) (sets int64, ok bool)

// hasComponents tells whether spec describes its workload by components.
func hasComponents(spec *workv1alpha2.ResourceBindingSpec) bool {
	return len(spec.Components) > 0
}

// maxAvailableSets is Karmada's general estimator for sets: how many more
// whole sets of comps a cluster can run, from its resourceSummary. Pods
// bound it by free pods / pods per set; every resource a set requests
// (each component's replicas × its request, summed) by floor(free /
// per-set request); the resource models, when the cluster reports them and
// they cover the requests, by what each component alone could run on them
// (see setsByModels). A set without pods is bounded by the free pods alone.
func maxAvailableSets(c *clusterv1alpha1.Cluster, comps []workv1alpha2.Component) int64 {
	rs := c.Status.ResourceSummary
	if rs == nil {
		return 0
	}
	freePods := free(rs, corev1.ResourcePods)
	pods := freePods.Value()
	if pods <= 0 {
		return 0
	}
	perSet := podsPerSet(comps)
	if perSet == 0 {
		return pods
	}
	n := pods / perSet
	for name, q := range setRequest(comps) {
		if q.Sign() <= 0 {
			continue
		}
		n = min(n, fits(name, free(rs, name), q))
	}
	if m, ok := setsByModels(c, comps); ok {
		n = min(n, m)
	}
	return n
}

// podsPerSet is the number of pods of one set.
func podsPerSet(comps []workv1alpha2.Component) int64 {
	var n int64
	for _, comp := range comps {
		n += int64(max(comp.Replicas, 0))
	}
	return n
}

// setRequest is what one set requests: each component's request times its
// replicas, summed per resource.
func setRequest(comps []workv1alpha2.Component) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, comp := range comps {
		if comp.Replicas <= 0 || comp.ReplicaRequirements == nil {
			continue
		}
		for name, q := range comp.ReplicaRequirements.ResourceRequest {
			total := q.DeepCopy()
			total.Mul(int64(comp.Replicas))
			sum := out[name]
			sum.Add(total)
			out[name] = sum
		}
	}
	return out
}

// setsByModels bounds the sets by the resource models: a set needs each
// component's replicas, and the models tell how many replicas of each
// component alone the cluster's nodes fit (byModels). The components share
// the nodes, so this is an upper bound; Karmada simulates a first-fit
// placement of whole sets on the model nodes instead. ok is false when no
// component's requests are modelled.
func setsByModels(c *clusterv1alpha1.Cluster, comps []workv1alpha2.Component) (int64, bool) {
	n, known := int64(math.MaxInt64), false
	for _, comp := range comps {
		if comp.Replicas <= 0 || comp.ReplicaRequirements == nil || len(comp.ReplicaRequirements.ResourceRequest) == 0 {
			continue
		}
		m, ok := byModels(c, &workv1alpha2.ReplicaRequirements{ResourceRequest: comp.ReplicaRequirements.ResourceRequest})
		if !ok {
			return 0, false
		}
		n, known = min(n, m/int64(comp.Replicas)), true
	}
	return n, known
}

// setsByEstimator bounds the sets by the per-replica estimator, asked for
// each component alone: a set needs each component's replicas, so the
// cluster runs at most estimate/replicas sets of it. The components share
// the cluster, so this is an upper bound, used when no set estimator is
// given. ok is false when the estimator knows nothing of any component.
func setsByEstimator(c *clusterv1alpha1.Cluster, comps []workv1alpha2.Component, namespace string, estimate Estimator) (int64, bool) {
	n, known := int64(math.MaxInt64), false
	for _, comp := range comps {
		if comp.Replicas <= 0 {
			continue
		}
		m, ok := estimate(c, componentRequirements(comp, namespace))
		if !ok {
			continue
		}
		n, known = min(n, max(m, 0)/int64(comp.Replicas)), true
	}
	return n, known
}

// componentRequirements are the requirements of one replica of comp, as
// the per-replica estimator takes them.
func componentRequirements(comp workv1alpha2.Component, namespace string) *workv1alpha2.ReplicaRequirements {
	req := &workv1alpha2.ReplicaRequirements{Namespace: namespace}
	if r := comp.ReplicaRequirements; r != nil {
		req.NodeClaim = r.NodeClaim.DeepCopy()
		req.ResourceRequest = r.ResourceRequest.DeepCopy()
		req.PriorityClassName = r.PriorityClassName
	}
	return req
}

// availableSets returns, per candidate, the whole sets of the binding's
// components it can still run, plus the set it already runs when the
// binding is scheduled there (its pods may already count as allocated).
// The smallest of the estimates counts: the resource summary, the set
// estimator when there is one, else the per-replica estimator asked for
// each component.
func availableSets(candidates []*clusterv1alpha1.Cluster, in input) map[string]int64 {
	spec := in.spec
	out := make(map[string]int64, len(candidates))
	held := assigned(spec.Clusters)
	for _, c := range candidates {
		n := maxAvailableSets(c, spec.Components)
		if in.estimateSets != nil {
			if m, ok := in.estimateSets(c, spec.Components); ok {
				n = min(n, m)
			}
		} else if in.estimate != nil {
			if m, ok := setsByEstimator(c, spec.Components, spec.Resource.Namespace, in.estimate); ok {
				n = min(n, m)
			}
		}
		if _, ok := held[c.Name]; ok {
			n++
		}
		out[c.Name] = min(n, math.MaxInt32)
	}
	return out
}

// noSet is why a cluster that cannot host one set is no candidate.
const noSet = "cluster(s) cannot host a whole set of the components"

// hostingSets keeps the feasible clusters that can host at least one whole
// set, recording the others in refused. None left is Unschedulable: the
// binding keeps its current clusters until one can host the workload.
func hostingSets(feasible []*clusterv1alpha1.Cluster, avail map[string]int64, refused map[string]string, total int) ([]*clusterv1alpha1.Cluster, error) {
	var out []*clusterv1alpha1.Cluster
	for _, c := range feasible {
		if avail[c.Name] > 0 {
			out = append(out, c)
			continue
		}
		refused[c.Name] = noSet
		delete(avail, c.Name)
	}
	if len(out) == 0 {
		return nil, unschedulable("%s", fitError(total, refused))
	}
	return out, nil
}

// assignSets gives every selected cluster one whole set: each component
// with all its replicas. Only the first tier of an overflow placement takes
// it: the later ones are for what earlier tiers cannot host, and a cluster
// that cannot host a set is no candidate.
func assignSets(selected []candidate, spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.TargetCluster {
	tier := math.MaxInt
	for _, c := range selected {
		tier = min(tier, c.tier)
	}
	out := make([]workv1alpha2.TargetCluster, 0, len(selected))
	for _, c := range selected {
		if c.tier != tier {
			continue
		}
		set := make([]workv1alpha2.TargetComponent, 0, len(spec.Components))
		for _, comp := range spec.Components {
			set = append(set, workv1alpha2.TargetComponent{Name: comp.Name, Replicas: comp.Replicas})
		}
		out = append(out, workv1alpha2.TargetCluster{Name: c.cluster.Name, Components: set})
	}
	return sorted(out)
}

// setsMessage is how a candidate's estimate reads in the decision log.
func setsMessage(n int64) string { return fmt.Sprintf("available %d sets", n) }
