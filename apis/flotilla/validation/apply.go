package validation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// ValidateApplyAnnotations validates the apply mode and take-over
// annotations among annotations (of a policy, binding or Work) at p, the
// path of the annotations.
func ValidateApplyAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, ok := annotations[flotillav1alpha1.ApplyModeAnnotation]; ok && !slices.Contains(flotillav1alpha1.ApplyModes, flotillav1alpha1.ApplyMode(v)) {
		errs = append(errs, field.NotSupported(p.Key(flotillav1alpha1.ApplyModeAnnotation), v, flotillav1alpha1.ApplyModes))
	}
	if v, ok := annotations[flotillav1alpha1.TakeOverAnnotation]; ok && !slices.Contains(flotillav1alpha1.TakeOvers, flotillav1alpha1.TakeOver(v)) {
		errs = append(errs, field.NotSupported(p.Key(flotillav1alpha1.TakeOverAnnotation), v, flotillav1alpha1.TakeOvers))
	}
	return errs
}
