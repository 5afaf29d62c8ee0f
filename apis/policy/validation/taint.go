package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func validateClusterTaintPolicySpec(s *policyv1alpha1.ClusterTaintPolicySpec, allowNoExecute bool, p *field.Path) field.ErrorList {
	errs := ValidateClusterAffinity(s.TargetClusters, p.Child("targetClusters"))
	errs = append(errs, validateMatchConditions(s.AddOnConditions, p.Child("addOnConditions"))...)
	errs = append(errs, validateMatchConditions(s.RemoveOnConditions, p.Child("removeOnConditions"))...)

	taintsPath := p.Child("taints")
	if len(s.Taints) == 0 {
		errs = append(errs, field.Required(taintsPath, "at least one taint is required"))
	}
	type keyEffect struct {
		key    string
		effect corev1.TaintEffect
	}
	seen := sets.New[keyEffect]()
	for i, t := range s.Taints {
		ip := taintsPath.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, msg))
		}
		errs = append(errs, validateEnum(t.Effect, true, ip.Child("effect"),
			corev1.TaintEffectNoSchedule, policyv1alpha1.TaintEffectPreferNoExecute, corev1.TaintEffectNoExecute)...)
		if t.Effect == corev1.TaintEffectNoExecute && !allowNoExecute {
			errs = append(errs, field.Forbidden(ip.Child("effect"), "NoExecute taints are not enabled on this control plane"))
		}
		ke := keyEffect{t.Key, t.Effect}
		if seen.Has(ke) {
			errs = append(errs, field.Duplicate(ip, fmt.Sprintf("%s:%s", t.Key, t.Effect)))
		}
		seen.Insert(ke)
	}
	return errs
}

func validateMatchConditions(conditions []policyv1alpha1.MatchCondition, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range conditions {
		ip := p.Index(i)
		errs = append(errs, validateRequiredString(c.ConditionType, ip.Child("conditionType"))...)
		errs = append(errs, validateEnum(c.Operator, true, ip.Child("operator"),
			policyv1alpha1.MatchConditionOpIn, policyv1alpha1.MatchConditionOpNotIn)...)
		valuesPath := ip.Child("statusValues")
		if len(c.StatusValues) == 0 {
			errs = append(errs, field.Required(valuesPath, "at least one condition status is required"))
		}
		for j, v := range c.StatusValues {
			errs = append(errs, validateEnum(v, true, valuesPath.Index(j),
				metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown)...)
		}
	}
	return errs
}
