// Package placementtest builds the clusters, placements and binding specs
// the tests of the placement algorithm and of the scheduler controller
// share. It is for tests only.
package placementtest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Deployment is the resource every test binding points at. FNV-1a32("uid-0")
// is even, so its Webster ties go to the smaller name.
var Deployment = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", UID: "uid-0"}

// ClusterOpt modifies a test cluster.
type ClusterOpt func(*clusterv1alpha1.Cluster)

// Cluster is a cluster serving apps/v1 Deployments, with no resource
// summary unless an option sets one.
func Cluster(name string, opts ...ClusterOpt) *clusterv1alpha1.Cluster {
	c := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1"},
		Status: clusterv1alpha1.ClusterStatus{APIEnablements: []clusterv1alpha1.APIEnablement{
			{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}},
			{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}},
		}},
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// RL builds a resource list from name, quantity pairs.
func RL(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// WithSummary sets the resource summary.
func WithSummary(allocatable, allocated, allocating corev1.ResourceList) ClusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: allocatable, Allocated: allocated, Allocating: allocating}
	}
}

// WithPods gives the cluster room for n more pods and nothing else.
func WithPods(n string) ClusterOpt { return WithSummary(RL("pods", n), nil, nil) }

// WithTaint adds a taint.
func WithTaint(key, value string, effect corev1.TaintEffect) ClusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

// WithLabels adds key, value pairs of labels.
func WithLabels(kv ...string) ClusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
}

// WithRegion sets spec.region.
func WithRegion(r string) ClusterOpt {
	return func(c *clusterv1alpha1.Cluster) { c.Spec.Region = r }
}

// WithoutAPIs removes the API enablements.
func WithoutAPIs() ClusterOpt {
	return func(c *clusterv1alpha1.Cluster) { c.Status.APIEnablements = nil }
}

// BeingDeleted sets a deletion timestamp.
func BeingDeleted() ClusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		now := metav1.Now()
		c.DeletionTimestamp = &now
	}
}

// At is a target cluster with replicas.
func At(name string, replicas int32) workv1alpha2.TargetCluster {
	return workv1alpha2.TargetCluster{Name: name, Replicas: replicas}
}

// OnClusters is an affinity naming clusters.
func OnClusters(cs ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: cs}
}

// DuplicatedRS duplicates replicas.
func DuplicatedRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
}

// StaticRS divides by static weights; without entries there is no
// weightPreference at all.
func StaticRS(entries ...policyv1alpha1.StaticClusterWeight) *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	if len(entries) > 0 {
		rs.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: entries}
	}
	return rs
}

// Weight is a static weight entry.
func Weight(w int64, affinity *policyv1alpha1.ClusterAffinity) policyv1alpha1.StaticClusterWeight {
	return policyv1alpha1.StaticClusterWeight{TargetCluster: *affinity, Weight: w}
}

// DynamicRS divides by available replicas.
func DynamicRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}
}

// AggregatedRS divides into as few clusters as possible.
func AggregatedRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated,
	}
}

// ByCluster spreads by cluster.
func ByCluster(minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: minGroups, MaxGroups: maxGroups}
}

// ByRegion spreads by region.
func ByRegion(minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: minGroups, MaxGroups: maxGroups}
}

// BindingSpec is a Deployment binding with replicas and placement.
func BindingSpec(replicas int32, p *policyv1alpha1.Placement, clusters ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBindingSpec {
	return &workv1alpha2.ResourceBindingSpec{Resource: Deployment, Replicas: replicas, Placement: p, Clusters: clusters}
}
