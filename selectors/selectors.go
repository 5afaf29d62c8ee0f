// Package selectors matches policies' resource selectors against resource
// templates and cluster affinities against clusters, the two matching rules the
// detector, scheduler and binding controller share (docs/compatibility.md,
// Policies and placement).
package selectors

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Implicit priorities of a selector match, Karmada's: the more specific the
// selector, the higher.
const (
	NoMatch       = 0
	MatchAll      = 1
	LabelSelected = 2
	NameSelected  = 3
)

// Object is what a resource selector looks at.
type Object interface {
	GetAPIVersion() string
	GetKind() string
	GetNamespace() string
	GetName() string
	GetLabels() map[string]string
}

// ResourceMatchPriority returns how specifically sel selects obj: NoMatch,
// MatchAll (apiVersion and kind, plus namespace when set), LabelSelected or
// NameSelected.
func ResourceMatchPriority(sel policyv1alpha1.ResourceSelector, obj Object) int {
	if sel.APIVersion != obj.GetAPIVersion() || sel.Kind != obj.GetKind() {
		return NoMatch
	}
	if sel.Namespace != "" && sel.Namespace != obj.GetNamespace() {
		return NoMatch
	}
	if sel.Name != "" {
		if sel.Name == obj.GetName() {
			return NameSelected
		}
		return NoMatch
	}
	if sel.LabelSelector == nil {
		return MatchAll
	}
	s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
	if err != nil || !s.Matches(labels.Set(obj.GetLabels())) {
		return NoMatch
	}
	return LabelSelected
}

// ResourceMatches tells whether sel selects obj.
func ResourceMatches(sel policyv1alpha1.ResourceSelector, obj Object) bool {
	return ResourceMatchPriority(sel, obj) != NoMatch
}

// BestMatch returns the highest priority with which any of sels selects obj.
func BestMatch(sels []policyv1alpha1.ResourceSelector, obj Object) int {
	best := NoMatch
	for _, s := range sels {
		best = max(best, ResourceMatchPriority(s, obj))
	}
	return best
}

// ClusterTargetingChanged tells whether a cluster changed in something a
// ClusterAffinity selects on: its labels, provider, region or zones.
func ClusterTargetingChanged(old, cur *clusterv1alpha1.Cluster) bool {
	return !labels.Equals(old.Labels, cur.Labels) || old.Spec.Provider != cur.Spec.Provider || old.Spec.Region != cur.Spec.Region ||
		old.Spec.Zone != cur.Spec.Zone || !slices.Equal(old.Spec.Zones, cur.Spec.Zones)
}

// ClusterMatches tells whether affinity selects cluster; a nil affinity
// selects every cluster. All set sub-terms are ANDed.
func ClusterMatches(cluster *clusterv1alpha1.Cluster, affinity *policyv1alpha1.ClusterAffinity) bool {
	if affinity == nil {
		return true
	}
	if slices.Contains(affinity.ExcludeClusters, cluster.Name) {
		return false
	}
	if len(affinity.ClusterNames) > 0 && !slices.Contains(affinity.ClusterNames, cluster.Name) {
		return false
	}
	if affinity.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(affinity.LabelSelector)
		if err != nil || !s.Matches(labels.Set(cluster.Labels)) {
			return false
		}
	}
	if affinity.FieldSelector != nil {
		for _, req := range affinity.FieldSelector.MatchExpressions {
			if !fieldMatches(cluster, req) {
				return false
			}
		}
	}
	return true
}

func fieldMatches(cluster *clusterv1alpha1.Cluster, req corev1.NodeSelectorRequirement) bool {
	values := sets.New(req.Values...)
	var have []string
	switch req.Key {
	case policyv1alpha1.ProviderField:
		have = nonEmpty(cluster.Spec.Provider)
	case policyv1alpha1.RegionField:
		have = nonEmpty(cluster.Spec.Region)
	case policyv1alpha1.ZoneField:
		have = cluster.Spec.Zones
		if len(have) == 0 {
			have = nonEmpty(cluster.Spec.Zone)
		}
	default:
		return false
	}
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		// Every value the cluster has must be allowed (a multi-zone cluster
		// matches only when all its zones are listed).
		if len(have) == 0 {
			return false
		}
		for _, v := range have {
			if !values.Has(v) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpNotIn:
		for _, v := range have {
			if values.Has(v) {
				return false
			}
		}
		return true
	case corev1.NodeSelectorOpExists:
		return len(have) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(have) == 0
	}
	return false
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}
