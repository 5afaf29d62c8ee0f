// Package validation validates Remedies. Karmada has no Remedy webhook; the
// checks here are those of its CRD schema plus what the remedy controller
// can act on.
package validation

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

// ValidateRemedy validates a Remedy on create.
func ValidateRemedy(r *remedyv1alpha1.Remedy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&r.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateRemedySpec(&r.Spec, field.NewPath("spec"))...)
}

// ValidateRemedyUpdate validates a Remedy on update.
func ValidateRemedyUpdate(r, old *remedyv1alpha1.Remedy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateRemedySpec(&r.Spec, field.NewPath("spec"))...)
}

var (
	operators = []remedyv1alpha1.ClusterConditionOperator{remedyv1alpha1.ClusterConditionEqual, remedyv1alpha1.ClusterConditionNotEqual}
	actions   = []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}
)

func validateRemedySpec(s *remedyv1alpha1.RemedySpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.ClusterAffinity != nil {
		np := p.Child("clusterAffinity", "clusterNames")
		for i, name := range s.ClusterAffinity.ClusterNames {
			if name == "" {
				errs = append(errs, field.Required(np.Index(i), ""))
			} else if msgs := clustervalidation.ValidateClusterName(name, false); len(msgs) > 0 {
				errs = append(errs, field.Invalid(np.Index(i), name, strings.Join(msgs, ", ")))
			}
		}
	}
	for i, m := range s.DecisionMatches {
		if m.ClusterConditionMatch == nil {
			continue
		}
		c, cp := m.ClusterConditionMatch, p.Child("decisionMatches").Index(i).Child("clusterConditionMatch")
		if c.ConditionType == "" {
			errs = append(errs, field.Required(cp.Child("conditionType"), ""))
		}
		switch c.Operator {
		case remedyv1alpha1.ClusterConditionEqual, remedyv1alpha1.ClusterConditionNotEqual:
		case "":
			errs = append(errs, field.Required(cp.Child("operator"), ""))
		default:
			errs = append(errs, field.NotSupported(cp.Child("operator"), c.Operator, operators))
		}
		if c.ConditionStatus == "" {
			errs = append(errs, field.Required(cp.Child("conditionStatus"), ""))
		}
	}
	seen := sets.New[remedyv1alpha1.RemedyAction]()
	for i, a := range s.Actions {
		ap := p.Child("actions").Index(i)
		if a != remedyv1alpha1.TrafficControl {
			errs = append(errs, field.NotSupported(ap, a, actions))
		}
		if seen.Has(a) {
			errs = append(errs, field.Duplicate(ap, a))
		}
		seen.Insert(a)
	}
	return errs
}
