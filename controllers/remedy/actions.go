package remedy

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

// Actions returns the actions cluster should carry under remedies: the
// union of the actions of every Remedy that selects the cluster and whose
// decision matches hold, sorted, without duplicates; nil when there are
// none.
func Actions(cluster *clusterv1alpha1.Cluster, remedies []*remedyv1alpha1.Remedy) []string {
	var actions []string
	for _, r := range remedies {
		if !Selects(r, cluster.Name) || !decisionMatches(r.Spec.DecisionMatches, cluster.Status.Conditions) {
			continue
		}
		for _, a := range r.Spec.Actions {
			actions = append(actions, string(a))
		}
	}
	slices.Sort(actions)
	return slices.Compact(actions)
}

// Selects reports whether a Remedy looks at the cluster: every cluster
// when it has no clusterAffinity, otherwise the clusters it names (as in
// Karmada, an affinity naming none selects none).
func Selects(r *remedyv1alpha1.Remedy, cluster string) bool {
	return r.Spec.ClusterAffinity == nil || slices.Contains(r.Spec.ClusterAffinity.ClusterNames, cluster)
}

// decisionMatches reports whether any one decision match holds on the
// conditions; none means always. A match without a condition requirement,
// or on a condition the cluster does not report, holds for neither
// operator, as in Karmada.
//
// Karmada tells nil decisionMatches (always) from an empty list (never);
// here the list goes through typed storage that omits an empty one, so
// both are read as always.
func decisionMatches(matches []remedyv1alpha1.DecisionMatch, conditions []metav1.Condition) bool {
	if len(matches) == 0 {
		return true
	}
	for _, m := range matches {
		req := m.ClusterConditionMatch
		if req == nil {
			continue
		}
		c := meta.FindStatusCondition(conditions, string(req.ConditionType))
		if c == nil {
			continue
		}
		switch req.Operator {
		case remedyv1alpha1.ClusterConditionEqual:
			if string(c.Status) == req.ConditionStatus {
				return true
			}
		case remedyv1alpha1.ClusterConditionNotEqual:
			if string(c.Status) != req.ConditionStatus {
				return true
			}
		}
	}
	return false
}
