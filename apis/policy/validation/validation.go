// Package validation validates the policy.karmada.io objects as Karmada's
// CRD schemas and validating admission webhook do together: required fields,
// enums, bounds and the cross-field rules of the webhook. The functions expect
// objects already mutated by package mutation (defaults, selector namespaces,
// permanent ids), as the registry strategies do before validating.
package validation

import (
	"fmt"
	"slices"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	flotillavalidation "github.com/flotilla-io/flotilla/apis/flotilla/validation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
)

// ValidatePropagationPolicy validates a PropagationPolicy on create.
func ValidatePropagationPolicy(pp *policyv1alpha1.PropagationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&pp.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validatePropagationPolicy(pp)...)
}

// ValidatePropagationPolicyUpdate validates an update of old to pp: the create
// rules, plus the permanent id and the scheduler name may not change.
func ValidatePropagationPolicyUpdate(pp, old *policyv1alpha1.PropagationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&pp.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateImmutableLabel(pp.Labels, old.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)...)
	errs = append(errs, apivalidation.ValidateImmutableField(pp.Spec.SchedulerName, old.Spec.SchedulerName, specPath.Child("schedulerName"))...)
	return append(errs, validatePropagationPolicy(pp)...)
}

func validatePropagationPolicy(pp *policyv1alpha1.PropagationPolicy) field.ErrorList {
	errs := validateRequiredLabel(pp.Labels, policyv1alpha1.PropagationPolicyPermanentIDLabel)
	errs = append(errs, flotillavalidation.ValidateApplyAnnotations(pp.Annotations, metadataPath.Child("annotations"))...)
	errs = append(errs, validateSelectorNamespaces(pp.Spec.ResourceSelectors, pp.Namespace, specPath.Child("resourceSelectors"))...)
	return append(errs, ValidatePropagationSpec(&pp.Spec, specPath)...)
}

// ValidateClusterPropagationPolicy validates a ClusterPropagationPolicy on create.
func ValidateClusterPropagationPolicy(cpp *policyv1alpha1.ClusterPropagationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&cpp.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metadataPath)
	errs = append(errs, validateRequiredLabel(cpp.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)...)
	errs = append(errs, flotillavalidation.ValidateApplyAnnotations(cpp.Annotations, metadataPath.Child("annotations"))...)
	return append(errs, ValidatePropagationSpec(&cpp.Spec, specPath)...)
}

// ValidateClusterPropagationPolicyUpdate validates an update of old to cpp: the
// create rules, plus the permanent id and the scheduler name may not change.
func ValidateClusterPropagationPolicyUpdate(cpp, old *policyv1alpha1.ClusterPropagationPolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&cpp.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, validateImmutableLabel(cpp.Labels, old.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)...)
	errs = append(errs, apivalidation.ValidateImmutableField(cpp.Spec.SchedulerName, old.Spec.SchedulerName, specPath.Child("schedulerName"))...)
	errs = append(errs, validateRequiredLabel(cpp.Labels, policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel)...)
	errs = append(errs, flotillavalidation.ValidateApplyAnnotations(cpp.Annotations, metadataPath.Child("annotations"))...)
	return append(errs, ValidatePropagationSpec(&cpp.Spec, specPath)...)
}

// ValidateOverridePolicy validates an OverridePolicy on create.
func ValidateOverridePolicy(op *policyv1alpha1.OverridePolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&op.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateOverridePolicy(op)...)
}

// ValidateOverridePolicyUpdate validates an update of old to op: the metadata
// update rules and the create rules.
func ValidateOverridePolicyUpdate(op, old *policyv1alpha1.OverridePolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&op.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateOverridePolicy(op)...)
}

func validateOverridePolicy(op *policyv1alpha1.OverridePolicy) field.ErrorList {
	errs := validateSelectorNamespaces(op.Spec.ResourceSelectors, op.Namespace, specPath.Child("resourceSelectors"))
	return append(errs, ValidateOverrideSpec(&op.Spec, specPath)...)
}

// ValidateClusterOverridePolicy validates a ClusterOverridePolicy on create.
func ValidateClusterOverridePolicy(cop *policyv1alpha1.ClusterOverridePolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&cop.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, ValidateOverrideSpec(&cop.Spec, specPath)...)
}

// ValidateClusterOverridePolicyUpdate validates an update of old to cop: the
// metadata update rules and the create rules.
func ValidateClusterOverridePolicyUpdate(cop, old *policyv1alpha1.ClusterOverridePolicy) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&cop.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, ValidateOverrideSpec(&cop.Spec, specPath)...)
}

// ValidateFederatedResourceQuota validates a FederatedResourceQuota on create.
func ValidateFederatedResourceQuota(q *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&q.ObjectMeta, true, apivalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateFederatedResourceQuotaSpec(&q.Spec, specPath)...)
}

// ValidateFederatedResourceQuotaUpdate validates an update of old to q: the
// metadata update rules and the create rules.
func ValidateFederatedResourceQuotaUpdate(q, old *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&q.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateFederatedResourceQuotaSpec(&q.Spec, specPath)...)
}

// ValidateFederatedResourceQuotaStatusUpdate validates an update of old to q
// through the status subresource: the metadata update rules and the status.
func ValidateFederatedResourceQuotaStatusUpdate(q, old *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&q.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateFederatedResourceQuotaStatus(&q.Status, field.NewPath("status"))...)
}

// ValidateClusterTaintPolicy validates a ClusterTaintPolicy on create.
// allowNoExecute says whether NoExecute taints are enabled (a controller flag
// in Karmada); when false they are forbidden.
func ValidateClusterTaintPolicy(ctp *policyv1alpha1.ClusterTaintPolicy, allowNoExecute bool) field.ErrorList {
	errs := apivalidation.ValidateObjectMeta(&ctp.ObjectMeta, false, apivalidation.NameIsDNSSubdomain, metadataPath)
	return append(errs, validateClusterTaintPolicySpec(&ctp.Spec, allowNoExecute, specPath)...)
}

// ValidateClusterTaintPolicyUpdate validates an update of old to ctp: the
// metadata update rules and the create rules.
func ValidateClusterTaintPolicyUpdate(ctp, old *policyv1alpha1.ClusterTaintPolicy, allowNoExecute bool) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&ctp.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(errs, validateClusterTaintPolicySpec(&ctp.Spec, allowNoExecute, specPath)...)
}

// validateRequiredLabel checks that label key is set; the mutating admission
// sets the permanent ids on create.
func validateRequiredLabel(labels map[string]string, key string) field.ErrorList {
	if labels[key] == "" {
		return field.ErrorList{field.Required(metadataPath.Child("labels").Key(key), "is set on create by the mutating admission and must not be removed")}
	}
	return nil
}

// validateImmutableLabel checks that label key keeps its value.
func validateImmutableLabel(labels, oldLabels map[string]string, key string) field.ErrorList {
	if labels[key] != oldLabels[key] {
		return field.ErrorList{field.Invalid(metadataPath.Child("labels").Key(key), labels[key], "field is immutable")}
	}
	return nil
}

// validateSelectorNamespaces checks that the selectors of a namespaced policy
// stay in its namespace (an empty namespace means the policy's).
func validateSelectorNamespaces(selectors []policyv1alpha1.ResourceSelector, namespace string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, rs := range selectors {
		if rs.Namespace != "" && rs.Namespace != namespace {
			errs = append(errs, field.Invalid(p.Index(i).Child("namespace"), rs.Namespace,
				fmt.Sprintf("must be the policy's namespace %q", namespace)))
		}
	}
	return errs
}

// validateEnum checks that v is one of allowed; empty is accepted unless required.
func validateEnum[T ~string](v T, required bool, p *field.Path, allowed ...T) field.ErrorList {
	switch {
	case v == "" && required:
		return field.ErrorList{field.Required(p, fmt.Sprintf("must be one of %q", allowed))}
	case v == "" || slices.Contains(allowed, v):
		return nil
	default:
		return field.ErrorList{field.NotSupported(p, v, allowed)}
	}
}

// validateRequiredString checks that a required string is set.
func validateRequiredString(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	return nil
}
