package overrides

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/selectors"
)

// candidate is a ClusterOverridePolicy or an OverridePolicy that selects the
// object, with the implicit priority it selects it with.
type candidate struct {
	// name is the policy name, recorded in the applied-overrides annotations.
	name string
	// ref names the policy in errors: "ClusterOverridePolicy x" or "OverridePolicy ns/x".
	ref      string
	spec     *policyv1alpha1.OverrideSpec
	priority int
}

// clusterCandidates returns the ClusterOverridePolicies that select obj, in
// application order.
func clusterCandidates(obj *unstructured.Unstructured, cops []*policyv1alpha1.ClusterOverridePolicy) []candidate {
	var out []candidate
	for _, p := range cops {
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		if c, ok := selects(obj, &p.Spec); ok {
			c.name, c.ref = p.Name, "ClusterOverridePolicy "+p.Name
			out = append(out, c)
		}
	}
	sortCandidates(out)
	return out
}

// namespaceCandidates returns the OverridePolicies of obj's namespace that
// select obj, in application order. Policies of other namespaces are
// skipped even if passed in: an OverridePolicy never reaches across
// namespaces.
func namespaceCandidates(obj *unstructured.Unstructured, ops []*policyv1alpha1.OverridePolicy) []candidate {
	var out []candidate
	for _, p := range ops {
		if p == nil || p.DeletionTimestamp != nil || p.Namespace != obj.GetNamespace() {
			continue
		}
		if c, ok := selects(obj, &p.Spec); ok {
			c.name, c.ref = p.Name, "OverridePolicy "+p.Namespace+"/"+p.Name
			out = append(out, c)
		}
	}
	sortCandidates(out)
	return out
}

// selects tells whether spec selects obj and with which implicit priority.
// A policy without resource selectors selects everything, as match-all.
func selects(obj *unstructured.Unstructured, spec *policyv1alpha1.OverrideSpec) (candidate, bool) {
	if len(spec.ResourceSelectors) == 0 {
		return candidate{spec: spec, priority: selectors.MatchAll}, true
	}
	p := selectors.BestMatch(spec.ResourceSelectors, obj)
	return candidate{spec: spec, priority: p}, p != selectors.NoMatch
}

// sortCandidates sorts ascending by implicit priority, then by name, so that
// the most specific policy is applied last and wins.
func sortCandidates(cs []candidate) {
	slices.SortStableFunc(cs, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.name, b.name))
	})
}

// matchingRules returns the overriders of spec that apply to cluster, in
// order. A spec without overrideRules falls back to the deprecated
// targetCluster + overriders pair, as Karmada does; validation keeps the two
// forms from co-existing.
func matchingRules(spec *policyv1alpha1.OverrideSpec, cluster *clusterv1alpha1.Cluster) []*policyv1alpha1.Overriders {
	rules := spec.OverrideRules
	if len(rules) == 0 {
		//nolint:staticcheck // the deprecated form is still served and must keep working.
		rules = []policyv1alpha1.RuleWithCluster{{TargetCluster: spec.TargetCluster, Overriders: spec.Overriders}}
	}
	var out []*policyv1alpha1.Overriders
	for i := range rules {
		if selectors.ClusterMatches(cluster, rules[i].TargetCluster) {
			out = append(out, &rules[i].Overriders)
		}
	}
	return out
}
