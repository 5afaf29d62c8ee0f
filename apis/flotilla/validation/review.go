package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// ValidatePlacementReview checks a dry-run placement's spec: between one
// and MaxReviewObjects objects, and a known Existing. Each object is
// checked by the review itself (its kind, namespace and, for policies,
// the policy's own validation).
func ValidatePlacementReview(r *flotillav1alpha1.PlacementReview) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	switch n := len(r.Spec.Objects); {
	case n == 0:
		errs = append(errs, field.Required(p.Child("objects"), "name the manifests to review"))
	case n > flotillav1alpha1.MaxReviewObjects:
		errs = append(errs, field.TooMany(p.Child("objects"), n, flotillav1alpha1.MaxReviewObjects))
	}
	for i, o := range r.Spec.Objects {
		if len(o.Raw) == 0 {
			errs = append(errs, field.Required(p.Child("objects").Index(i), "an object"))
		}
	}
	switch r.Spec.Existing {
	case "", flotillav1alpha1.ReviewExistingInclude, flotillav1alpha1.ReviewExistingIgnore:
	default:
		errs = append(errs, field.NotSupported(p.Child("existing"), r.Spec.Existing,
			[]string{flotillav1alpha1.ReviewExistingInclude, flotillav1alpha1.ReviewExistingIgnore}))
	}
	return errs
}
