package scheduler

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Builders shared by the scheduler tests.

// deployment is the resource every test binding points at. FNV-1a32("uid-0")
// is even, so its Webster ties go to the smaller name.
var deployment = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "web", UID: "uid-0"}

type clusterOpt func(*clusterv1alpha1.Cluster)

// newCluster is a cluster serving apps/v1 Deployments, with no resource
// summary unless an option sets one.
func newCluster(name string, opts ...clusterOpt) *clusterv1alpha1.Cluster {
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

// rl builds a resource list from name, quantity pairs.
func rl(pairs ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return out
}

// withSummary sets the resource summary.
func withSummary(allocatable, allocated, allocating corev1.ResourceList) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: allocatable, Allocated: allocated, Allocating: allocating}
	}
}

// withPods gives the cluster room for n more pods and nothing else.
func withPods(n string) clusterOpt { return withSummary(rl("pods", n), nil, nil) }

func withTaint(key, value string, effect corev1.TaintEffect) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		c.Spec.Taints = append(c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

func withLabels(kv ...string) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			c.Labels[kv[i]] = kv[i+1]
		}
	}
}

func withRegion(r string) clusterOpt {
	return func(c *clusterv1alpha1.Cluster) { c.Spec.Region = r }
}

func withoutAPIs() clusterOpt {
	return func(c *clusterv1alpha1.Cluster) { c.Status.APIEnablements = nil }
}

func beingDeleted() clusterOpt {
	return func(c *clusterv1alpha1.Cluster) {
		now := metav1.Now()
		c.DeletionTimestamp = &now
	}
}

// cand is a candidate named name with available replicas.
func cand(name string, available int64, opts ...clusterOpt) candidate {
	return candidate{cluster: newCluster(name, opts...), available: available}
}

// held is a candidate the binding already runs on (ClusterLocality 100).
func held(c candidate) candidate {
	c.score = 100
	return c
}

func at(name string, replicas int32) workv1alpha2.TargetCluster {
	return workv1alpha2.TargetCluster{Name: name, Replicas: replicas}
}

func onClusters(cs ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: cs}
}

// Replica scheduling strategies.

func duplicatedRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
}

// staticRS divides by static weights; without entries there is no
// weightPreference at all.
func staticRS(entries ...policyv1alpha1.StaticClusterWeight) *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
	}
	if len(entries) > 0 {
		rs.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: entries}
	}
	return rs
}

func weight(w int64, affinity *policyv1alpha1.ClusterAffinity) policyv1alpha1.StaticClusterWeight {
	return policyv1alpha1.StaticClusterWeight{TargetCluster: *affinity, Weight: w}
}

func dynamicRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceWeighted,
		WeightPreference:          &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas},
	}
}

func aggregatedRS() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated,
	}
}

func byCluster(minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MinGroups: minGroups, MaxGroups: maxGroups}
}

func byRegion(minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: policyv1alpha1.SpreadByFieldRegion, MinGroups: minGroups, MaxGroups: maxGroups}
}

// bindingSpec is a Deployment binding with replicas and placement.
func bindingSpec(replicas int32, p *policyv1alpha1.Placement, clusters ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBindingSpec {
	return &workv1alpha2.ResourceBindingSpec{Resource: deployment, Replicas: replicas, Placement: p, Clusters: clusters}
}

// checkErr compares an error with the wanted Scheduled reason and message
// ("" reason: no error). It reports whether err was nil.
func checkErr(t *testing.T, err error, wantReason, wantMessage string) bool {
	t.Helper()
	if wantReason == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return true
	}
	var se *scheduleError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want a scheduleError with reason %s", err, wantReason)
	}
	if se.reason != wantReason || se.message != wantMessage {
		t.Errorf("error = %s: %q, want %s: %q", se.reason, se.message, wantReason, wantMessage)
	}
	return false
}
