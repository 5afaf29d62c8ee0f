package validation

import (
	"bytes"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

var (
	allOperators        = []policyv1alpha1.OverriderOperator{policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace}
	commandArgsOperator = []policyv1alpha1.OverriderOperator{policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove}
)

// ValidateOverrideSpec validates the spec shared by OverridePolicy and
// ClusterOverridePolicy; p is the path of the spec.
func ValidateOverrideSpec(s *policyv1alpha1.OverrideSpec, p *field.Path) field.ErrorList {
	errs := validateResourceSelectors(s.ResourceSelectors, p.Child("resourceSelectors"))
	if len(s.OverrideRules) > 0 {
		if s.TargetCluster != nil {
			errs = append(errs, field.Forbidden(p.Child("targetCluster"), "cannot be set together with overrideRules (targetCluster is deprecated)"))
		}
		if !emptyOverriders(&s.Overriders) {
			errs = append(errs, field.Forbidden(p.Child("overriders"), "cannot be set together with overrideRules (overriders is deprecated)"))
		}
	}
	errs = append(errs, ValidateClusterAffinity(s.TargetCluster, p.Child("targetCluster"))...)
	errs = append(errs, validateOverriders(&s.Overriders, p.Child("overriders"))...)
	for i := range s.OverrideRules {
		r := &s.OverrideRules[i]
		ip := p.Child("overrideRules").Index(i)
		errs = append(errs, ValidateClusterAffinity(r.TargetCluster, ip.Child("targetCluster"))...)
		errs = append(errs, validateOverriders(&r.Overriders, ip.Child("overriders"))...)
	}
	return errs
}

func emptyOverriders(o *policyv1alpha1.Overriders) bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 &&
		len(o.ArgsOverrider) == 0 && len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 &&
		len(o.FieldOverrider) == 0
}

func validateOverriders(o *policyv1alpha1.Overriders, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, po := range o.Plaintext {
		ip := p.Child("plaintext").Index(i)
		errs = append(errs, validateJSONPointer(po.Path, ip.Child("path"))...)
		errs = append(errs, validatePatchOperation(po.Operator, po.Value, ip)...)
	}
	for i, io := range o.ImageOverrider {
		ip := p.Child("imageOverrider").Index(i)
		if io.Predicate != nil {
			errs = append(errs, validateJSONPointer(io.Predicate.Path, ip.Child("predicate", "path"))...)
		}
		errs = append(errs, validateEnum(io.Component, true, ip.Child("component"),
			policyv1alpha1.Registry, policyv1alpha1.Repository, policyv1alpha1.Tag)...)
		errs = append(errs, validateEnum(io.Operator, true, ip.Child("operator"), allOperators...)...)
		// A value given with remove is ignored, as in Karmada.
		if (io.Operator == policyv1alpha1.OverriderOpAdd || io.Operator == policyv1alpha1.OverriderOpReplace) && io.Value == "" {
			errs = append(errs, field.Required(ip.Child("value"), "must be set when operator is add or replace"))
		}
	}
	for _, list := range []struct {
		name      string
		overrides []policyv1alpha1.CommandArgsOverrider
	}{{"commandOverrider", o.CommandOverrider}, {"argsOverrider", o.ArgsOverrider}} {
		for i, co := range list.overrides {
			ip := p.Child(list.name).Index(i)
			errs = append(errs, validateRequiredString(co.ContainerName, ip.Child("containerName"))...)
			errs = append(errs, validateEnum(co.Operator, true, ip.Child("operator"), commandArgsOperator...)...)
		}
	}
	for i, lo := range o.LabelsOverrider {
		ip := p.Child("labelsOverrider").Index(i)
		errs = append(errs, validateEnum(lo.Operator, true, ip.Child("operator"), allOperators...)...)
		if len(lo.Value) == 0 {
			errs = append(errs, field.Required(ip.Child("value"), "at least one label is required"))
		}
		errs = append(errs, metav1validation.ValidateLabels(lo.Value, ip.Child("value"))...)
	}
	for i, ao := range o.AnnotationsOverrider {
		ip := p.Child("annotationsOverrider").Index(i)
		errs = append(errs, validateEnum(ao.Operator, true, ip.Child("operator"), allOperators...)...)
		if len(ao.Value) == 0 {
			errs = append(errs, field.Required(ip.Child("value"), "at least one annotation is required"))
		}
		errs = append(errs, apivalidation.ValidateAnnotations(ao.Value, ip.Child("value"))...)
	}
	for i := range o.FieldOverrider {
		errs = append(errs, validateFieldOverrider(&o.FieldOverrider[i], p.Child("fieldOverrider").Index(i))...)
	}
	return errs
}

func validateFieldOverrider(fo *policyv1alpha1.FieldOverrider, p *field.Path) field.ErrorList {
	errs := validateJSONPointer(fo.FieldPath, p.Child("fieldPath"))
	switch {
	case len(fo.JSON) > 0 && len(fo.YAML) > 0:
		errs = append(errs, field.Forbidden(p.Child("yaml"), "cannot be set together with json"))
	case len(fo.JSON) == 0 && len(fo.YAML) == 0:
		errs = append(errs, field.Required(p, "exactly one of json or yaml must be set"))
	}
	for i, op := range fo.JSON {
		ip := p.Child("json").Index(i)
		errs = append(errs, validateJSONPointer(op.SubPath, ip.Child("subPath"))...)
		errs = append(errs, validatePatchOperation(op.Operator, op.Value, ip)...)
	}
	for i, op := range fo.YAML {
		ip := p.Child("yaml").Index(i)
		errs = append(errs, validateJSONPointer(op.SubPath, ip.Child("subPath"))...)
		errs = append(errs, validatePatchOperation(op.Operator, op.Value, ip)...)
	}
	return errs
}

// validatePatchOperation checks the operator of a patch operation and that add
// and replace carry a value while remove does not; p is the operation's path.
func validatePatchOperation(op policyv1alpha1.OverriderOperator, v apiextensionsv1.JSON, p *field.Path) field.ErrorList {
	errs := validateEnum(op, true, p.Child("operator"), allOperators...)
	hasValue := len(v.Raw) > 0 && !bytes.Equal(bytes.TrimSpace(v.Raw), []byte("null"))
	switch {
	case op == policyv1alpha1.OverriderOpRemove && hasValue:
		errs = append(errs, field.Forbidden(p.Child("value"), "must not be set when operator is remove"))
	case (op == policyv1alpha1.OverriderOpAdd || op == policyv1alpha1.OverriderOpReplace) && !hasValue:
		errs = append(errs, field.Required(p.Child("value"), "must be set when operator is add or replace"))
	}
	return errs
}

// validateJSONPointer checks that ptr is a non-empty RFC 6901 JSON pointer:
// '/'-separated reference tokens in which '~' only starts "~0" or "~1".
func validateJSONPointer(ptr string, p *field.Path) field.ErrorList {
	if ptr == "" {
		return field.ErrorList{field.Required(p, "a JSON pointer such as /spec/replicas is required")}
	}
	if !strings.HasPrefix(ptr, "/") {
		return field.ErrorList{field.Invalid(p, ptr, "must be a JSON pointer (RFC 6901) starting with '/'")}
	}
	for i := 0; i < len(ptr); i++ {
		if ptr[i] == '~' && (i+1 == len(ptr) || (ptr[i+1] != '0' && ptr[i+1] != '1')) {
			return field.ErrorList{field.Invalid(p, ptr, "'~' must be escaped as '~0' ('~1' stands for '/') in a JSON pointer (RFC 6901)")}
		}
	}
	return nil
}
