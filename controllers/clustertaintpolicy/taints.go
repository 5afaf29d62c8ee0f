package clustertaintpolicy

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/selectors"
)

// Taints returns the taints cluster should carry under policies (in any
// order; they are applied oldest first, then by name), stamping added
// taints with now. The result shares nothing with cluster.
func Taints(cluster *clusterv1alpha1.Cluster, policies []*policyv1alpha1.ClusterTaintPolicy, now metav1.Time) []corev1.Taint {
	ordered := slices.Clone(policies)
	slices.SortStableFunc(ordered, func(a, b *policyv1alpha1.ClusterTaintPolicy) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	taints := make([]corev1.Taint, 0, len(cluster.Spec.Taints))
	for _, t := range cluster.Spec.Taints {
		taints = append(taints, *t.DeepCopy())
	}
	for _, p := range ordered {
		if p.DeletionTimestamp != nil {
			continue
		}
		if !selectors.ClusterMatches(cluster, p.Spec.TargetClusters) {
			continue
		}
		if conditionsMatch(cluster.Status.Conditions, p.Spec.AddOnConditions) {
			for _, t := range p.Spec.Taints {
				if !slices.ContainsFunc(taints, same(t)) {
					added := now
					taints = append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: &added})
				}
			}
		}
		if conditionsMatch(cluster.Status.Conditions, p.Spec.RemoveOnConditions) {
			for _, t := range p.Spec.Taints {
				taints = slices.DeleteFunc(taints, same(t))
			}
		}
	}
	return taints
}

// same matches a cluster taint with a policy taint: key and effect.
func same(t policyv1alpha1.Taint) func(corev1.Taint) bool {
	return func(c corev1.Taint) bool { return c.Key == t.Key && c.Effect == t.Effect }
}

// conditionsMatch reports whether every match condition holds (AND). A
// condition the cluster does not report matches neither In nor NotIn.
// An empty list matches nothing.
func conditionsMatch(conditions []metav1.Condition, match []policyv1alpha1.MatchCondition) bool {
	if len(match) == 0 {
		return false
	}
	for _, m := range match {
		c := meta.FindStatusCondition(conditions, m.ConditionType)
		if c == nil {
			return false
		}
		in := slices.Contains(m.StatusValues, c.Status)
		switch m.Operator {
		case policyv1alpha1.MatchConditionOpIn:
			if !in {
				return false
			}
		case policyv1alpha1.MatchConditionOpNotIn:
			if in {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// describe is the taints as the event shows them: key=value:Effect, ...
func describe(taints []corev1.Taint) string {
	parts := make([]string, len(taints))
	for i, t := range taints {
		parts[i] = t.Key + "=" + t.Value + ":" + string(t.Effect)
	}
	return strings.Join(parts, ",")
}
