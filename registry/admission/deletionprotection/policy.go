package deletionprotection

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
)

// HostPolicyName names the ValidatingAdmissionPolicy and its binding on the
// host, after the Karmada webhook they stand in for.
const HostPolicyName = "resourcedeletionprotection.karmada.io"

// hostExpression allows a deletion unless the object being deleted (the old
// object: for a DELETE, object is null) carries Label=Always.
const hostExpression = "!has(oldObject.metadata.labels) || !('" + Label + "' in oldObject.metadata.labels) || " +
	"oldObject.metadata.labels['" + Label + "'] != '" + Always + "'"

// HostPolicy is the ValidatingAdmissionPolicy that refuses, on the host, the
// DELETE of any object labelled Label=Always. Like Karmada's webhook it
// matches every resource and selects the objects that have the label at all,
// so the expression runs only for them.
func HostPolicy() *admissionregistrationv1ac.ValidatingAdmissionPolicyApplyConfiguration {
	all := []string{"*"}
	return admissionregistrationv1ac.ValidatingAdmissionPolicy(HostPolicyName).
		WithSpec(admissionregistrationv1ac.ValidatingAdmissionPolicySpec().
			WithFailurePolicy(admissionregistrationv1.Fail).
			WithMatchConstraints(admissionregistrationv1ac.MatchResources().
				WithObjectSelector(metav1ac.LabelSelector().WithMatchExpressions(
					metav1ac.LabelSelectorRequirement().WithKey(Label).WithOperator(metav1.LabelSelectorOpExists))).
				WithResourceRules(admissionregistrationv1ac.NamedRuleWithOperations().
					WithOperations(admissionregistrationv1.Delete).
					WithAPIGroups(all...).WithAPIVersions(all...).WithResources(all...).
					WithScope(admissionregistrationv1.AllScopes))).
			WithValidations(admissionregistrationv1ac.Validation().
				WithExpression(hostExpression).
				WithMessage(Message).
				WithReason(metav1.StatusReasonForbidden)))
}

// HostPolicyBinding binds HostPolicy to every object it matches, denying.
func HostPolicyBinding() *admissionregistrationv1ac.ValidatingAdmissionPolicyBindingApplyConfiguration {
	return admissionregistrationv1ac.ValidatingAdmissionPolicyBinding(HostPolicyName).
		WithSpec(admissionregistrationv1ac.ValidatingAdmissionPolicyBindingSpec().
			WithPolicyName(HostPolicyName).
			WithValidationActions(admissionregistrationv1.Deny))
}
