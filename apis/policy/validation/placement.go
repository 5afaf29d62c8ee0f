package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// maxAffinityNameLength is the longest name of a cluster group.
const maxAffinityNameLength = 32

// ValidatePlacement validates a Placement; p is its path.
func ValidatePlacement(pl *policyv1alpha1.Placement, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if pl.ClusterAffinity != nil && len(pl.ClusterAffinities) > 0 {
		errs = append(errs, field.Forbidden(p.Child("clusterAffinities"), "cannot be set together with clusterAffinity"))
	}
	errs = append(errs, ValidateClusterAffinity(pl.ClusterAffinity, p.Child("clusterAffinity"))...)
	errs = append(errs, validateClusterAffinityTerms(pl.ClusterAffinities, overflowAllowed(pl.ReplicaScheduling), p.Child("clusterAffinities"))...)
	errs = append(errs, validateTolerations(pl.ClusterTolerations, p.Child("clusterTolerations"))...)
	errs = append(errs, validateSpreadConstraints(pl.SpreadConstraints, p.Child("spreadConstraints"))...)
	errs = append(errs, validateReplicaScheduling(pl.ReplicaScheduling, p.Child("replicaScheduling"))...)
	return append(errs, validateWorkloadAffinity(pl.WorkloadAffinity, p.Child("workloadAffinity"))...)
}

// ValidateClusterAffinity validates a ClusterAffinity (nil is valid); p is
// its path, which for inline affinities is the path of the enclosing term.
func ValidateClusterAffinity(a *policyv1alpha1.ClusterAffinity, p *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if a.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(a.LabelSelector,
			metav1validation.LabelSelectorValidationOptions{}, p.Child("labelSelector"))...)
	}
	if a.FieldSelector != nil {
		exprPath := p.Child("fieldSelector", "matchExpressions")
		for i, req := range a.FieldSelector.MatchExpressions {
			ip := exprPath.Index(i)
			errs = append(errs, validateEnum(req.Key, true, ip.Child("key"),
				policyv1alpha1.ProviderField, policyv1alpha1.RegionField, policyv1alpha1.ZoneField)...)
			errs = append(errs, validateEnum(req.Operator, true, ip.Child("operator"),
				corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn)...)
		}
	}
	return errs
}

// emptyAffinity says whether a selects every cluster.
func emptyAffinity(a *policyv1alpha1.ClusterAffinity) bool {
	return a.LabelSelector == nil && a.FieldSelector == nil && len(a.ClusterNames) == 0 && len(a.ExcludeClusters) == 0
}

// overflowAllowed says whether the replica scheduling can spill replicas over
// to further groups: Divided with Aggregated or with a dynamic weight.
func overflowAllowed(rs *policyv1alpha1.ReplicaSchedulingStrategy) bool {
	if rs == nil || (rs.ReplicaSchedulingType != "" && rs.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided) {
		return false
	}
	switch rs.ReplicaDivisionPreference {
	case policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return true
	case "", policyv1alpha1.ReplicaDivisionPreferenceWeighted:
		return rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
	}
	return false
}

func validateClusterAffinityTerms(terms []policyv1alpha1.ClusterAffinityTerm, overflowOK bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range terms {
		term := &terms[i]
		ip := p.Index(i)
		namePath := ip.Child("affinityName")
		errs = append(errs, validateAffinityName(term.AffinityName, namePath)...)
		if term.AffinityName != "" && names.Has(term.AffinityName) {
			errs = append(errs, field.Duplicate(namePath, term.AffinityName))
		}
		names.Insert(term.AffinityName)
		errs = append(errs, ValidateClusterAffinity(&term.ClusterAffinity, ip)...)
		if len(term.OverflowAffinities) == 0 {
			continue
		}
		overflowPath := ip.Child("overflowAffinities")
		if !overflowOK {
			errs = append(errs, field.Forbidden(overflowPath,
				"can only be used with replicaScheduling Divided and either the Aggregated division or a dynamic weight"))
		}
		if emptyAffinity(&term.ClusterAffinity) {
			errs = append(errs, field.Forbidden(overflowPath,
				"can only be used when the term's own cluster affinity selects clusters"))
		}
		seen := sets.New(term.AffinityName)
		for j := range term.OverflowAffinities {
			o := &term.OverflowAffinities[j]
			jp := overflowPath.Index(j)
			errs = append(errs, validateAffinityName(o.AffinityName, jp.Child("affinityName"))...)
			if o.AffinityName != "" && seen.Has(o.AffinityName) {
				errs = append(errs, field.Invalid(jp.Child("affinityName"), o.AffinityName,
					"must be unique among the overflow affinities and differ from the term's affinityName"))
			}
			seen.Insert(o.AffinityName)
			errs = append(errs, ValidateClusterAffinity(&o.ClusterAffinity, jp)...)
		}
	}
	return errs
}

// validateAffinityName checks a group name: 1 to 32 characters, a valid label key.
func validateAffinityName(name string, p *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(p, "")}
	case len(name) > maxAffinityNameLength:
		return field.ErrorList{field.TooLong(p, name, maxAffinityNameLength)}
	default:
		return metav1validation.ValidateLabelName(name, p)
	}
}

// validateTolerations rejects the Lt and Gt operators, which have no meaning for cluster taints.
func validateTolerations(tolerations []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		errs = append(errs, validateEnum(t.Operator, false, p.Index(i).Child("operator"),
			corev1.TolerationOpEqual, corev1.TolerationOpExists)...)
	}
	return errs
}

func validateSpreadConstraints(constraints []policyv1alpha1.SpreadConstraint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	fields := sets.New[policyv1alpha1.SpreadFieldValue]()
	for i, sc := range constraints {
		ip := p.Index(i)
		if sc.SpreadByField != "" && sc.SpreadByLabel != "" {
			errs = append(errs, field.Forbidden(ip.Child("spreadByLabel"), "cannot be set together with spreadByField"))
		}
		if sc.SpreadByField != "" {
			errs = append(errs, validateEnum(sc.SpreadByField, false, ip.Child("spreadByField"),
				policyv1alpha1.SpreadByFieldCluster, policyv1alpha1.SpreadByFieldRegion,
				policyv1alpha1.SpreadByFieldZone, policyv1alpha1.SpreadByFieldProvider)...)
			if fields.Has(sc.SpreadByField) {
				errs = append(errs, field.Invalid(ip.Child("spreadByField"), sc.SpreadByField,
					fmt.Sprintf("only one %s spread constraint is allowed", sc.SpreadByField)))
			}
			fields.Insert(sc.SpreadByField)
		}
		if sc.SpreadByLabel != "" {
			errs = append(errs, metav1validation.ValidateLabelName(sc.SpreadByLabel, ip.Child("spreadByLabel"))...)
		}
		if sc.MaxGroups < 0 {
			errs = append(errs, field.Invalid(ip.Child("maxGroups"), sc.MaxGroups, "must be greater than or equal to 0"))
		}
		if sc.MinGroups < 0 {
			errs = append(errs, field.Invalid(ip.Child("minGroups"), sc.MinGroups, "must be greater than or equal to 0"))
		}
		if sc.MaxGroups > 0 && sc.MaxGroups < sc.MinGroups {
			errs = append(errs, field.Invalid(ip.Child("maxGroups"), sc.MaxGroups, "must not be lower than minGroups"))
		}
	}
	if fields.Len() > 0 && !fields.Has(policyv1alpha1.SpreadByFieldCluster) {
		errs = append(errs, field.Required(p,
			"a spreadByField: cluster constraint is required when any constraint spreads by field"))
	}
	return errs
}

func validateReplicaScheduling(rs *policyv1alpha1.ReplicaSchedulingStrategy, p *field.Path) field.ErrorList {
	if rs == nil {
		return nil
	}
	errs := validateEnum(rs.ReplicaSchedulingType, false, p.Child("replicaSchedulingType"),
		policyv1alpha1.ReplicaSchedulingTypeDuplicated, policyv1alpha1.ReplicaSchedulingTypeDivided)
	errs = append(errs, validateEnum(rs.ReplicaDivisionPreference, false, p.Child("replicaDivisionPreference"),
		policyv1alpha1.ReplicaDivisionPreferenceAggregated, policyv1alpha1.ReplicaDivisionPreferenceWeighted)...)
	wp := rs.WeightPreference
	if wp == nil {
		return errs
	}
	wpPath := p.Child("weightPreference")
	for i := range wp.StaticWeightList {
		w := &wp.StaticWeightList[i]
		ip := wpPath.Child("staticWeightList").Index(i)
		if w.Weight < 1 {
			errs = append(errs, field.Invalid(ip.Child("weight"), w.Weight, "must be greater than or equal to 1"))
		}
		errs = append(errs, ValidateClusterAffinity(&w.TargetCluster, ip.Child("targetCluster"))...)
	}
	return append(errs, validateEnum(wp.DynamicWeight, false, wpPath.Child("dynamicWeight"),
		policyv1alpha1.DynamicWeightByAvailableReplicas)...)
}

func validateWorkloadAffinity(wa *policyv1alpha1.WorkloadAffinity, p *field.Path) field.ErrorList {
	if wa == nil {
		return nil
	}
	var errs field.ErrorList
	if wa.Affinity != nil {
		errs = append(errs, validateGroupByLabelKey(wa.Affinity.GroupByLabelKey, p.Child("affinity", "groupByLabelKey"))...)
	}
	if wa.AntiAffinity != nil {
		keyPath := p.Child("antiAffinity", "groupByLabelKey")
		errs = append(errs, validateGroupByLabelKey(wa.AntiAffinity.GroupByLabelKey, keyPath)...)
		if wa.Affinity != nil && wa.Affinity.GroupByLabelKey != "" && wa.Affinity.GroupByLabelKey == wa.AntiAffinity.GroupByLabelKey {
			errs = append(errs, field.Invalid(keyPath, wa.AntiAffinity.GroupByLabelKey,
				"affinity and antiAffinity must not use the same groupByLabelKey"))
		}
	}
	return errs
}

func validateGroupByLabelKey(key string, p *field.Path) field.ErrorList {
	if key == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return metav1validation.ValidateLabelName(key, p)
}
