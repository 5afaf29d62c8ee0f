// Package validation validates WorkloadRebalancers as Karmada's CRD schema
// does.
package validation

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
)

// ValidateWorkloadRebalancer validates a WorkloadRebalancer on create.
func ValidateWorkloadRebalancer(r *appsv1alpha1.WorkloadRebalancer) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&r.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	return append(errs, validateWorkloadRebalancerSpec(&r.Spec, field.NewPath("spec"))...)
}

// ValidateWorkloadRebalancerUpdate validates a WorkloadRebalancer on
// update. The workloads may change: the controller acts again on the new
// generation.
func ValidateWorkloadRebalancerUpdate(r, old *appsv1alpha1.WorkloadRebalancer) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateWorkloadRebalancerSpec(&r.Spec, field.NewPath("spec"))...)
}

func validateWorkloadRebalancerSpec(s *appsv1alpha1.WorkloadRebalancerSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	wp := p.Child("workloads")
	if len(s.Workloads) == 0 {
		errs = append(errs, field.Required(wp, "must list at least one workload"))
	}
	for i, w := range s.Workloads {
		errs = append(errs, validateObjectReference(w, wp.Index(i))...)
	}
	if s.TTLSecondsAfterFinished != nil {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(*s.TTLSecondsAfterFinished), p.Child("ttlSecondsAfterFinished"))...)
	}
	return errs
}

func validateObjectReference(w appsv1alpha1.ObjectReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if w.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(w.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), w.APIVersion, err.Error()))
	}
	if w.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if w.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	if w.Namespace != "" {
		for _, msg := range apivalidation.ValidateNamespaceName(w.Namespace, false) {
			errs = append(errs, field.Invalid(p.Child("namespace"), w.Namespace, msg))
		}
	}
	return errs
}
