package server

import (
	"context"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/inventory"
)

// InventoryWritersPolicy names the ValidatingAdmissionPolicy and its binding
// that keep the inventory Flotilla publishes on the host (ClusterProfiles
// and PlacementDecisions labelled x-k8s.io/cluster-manager=flotilla)
// written by Flotilla alone.
const InventoryWritersPolicy = "inventory-writers.flotilla.io"

// Who may write Flotilla's inventory: an identity the host's authorizer
// allows the verb InventoryPublishVerb on the resource InventoryResource of
// the group flotilla.io. flotilla-apiserver's service account has it (the
// chart grants it every verb); cluster admins (system:masters) have it. A
// user with RBAC on clusterprofiles alone has not.
const (
	InventoryResource    = "inventory"
	InventoryPublishVerb = "publish"
)

// inventoryWritersExpression allows a write by an identity that may publish
// the inventory, and a DELETE by kube-controller-manager (the namespace
// controller and the garbage collector delete what a deleted namespace
// held).
const inventoryWritersExpression = "authorizer.group('flotilla.io').resource('" + InventoryResource + "').check('" + InventoryPublishVerb + "').allowed()" +
	" || (request.operation == 'DELETE' && (request.userInfo.username.startsWith('system:serviceaccount:kube-system:')" +
	" || request.userInfo.username == 'system:kube-controller-manager'))"

// inventoryWritersMessage is what a refused writer reads.
const inventoryWritersMessage = "ClusterProfiles and PlacementDecisions labelled " + multiclusterv1alpha1.LabelClusterManager + "=" + inventory.Manager +
	" are published by Flotilla, their cluster manager, and are read-only for users: change the Cluster (or the binding) they describe instead"

// inventoryWritersPolicy is the ValidatingAdmissionPolicy refusing users'
// creates, updates and deletes of Flotilla's profiles and decisions. The
// object selector matches when the old or the new object is labelled as
// Flotilla's, so neither adding the label nor removing it escapes.
func inventoryWritersPolicy() *admissionregistrationv1ac.ValidatingAdmissionPolicyApplyConfiguration {
	return admissionregistrationv1ac.ValidatingAdmissionPolicy(InventoryWritersPolicy).
		WithSpec(admissionregistrationv1ac.ValidatingAdmissionPolicySpec().
			WithFailurePolicy(admissionregistrationv1.Fail).
			WithMatchConstraints(admissionregistrationv1ac.MatchResources().
				WithObjectSelector(metav1ac.LabelSelector().WithMatchLabels(map[string]string{multiclusterv1alpha1.LabelClusterManager: inventory.Manager})).
				WithResourceRules(admissionregistrationv1ac.NamedRuleWithOperations().
					WithOperations(admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete).
					WithAPIGroups(multiclusterv1alpha1.GroupName).WithAPIVersions("*").
					WithResources(multiclusterv1alpha1.ClusterProfileResource, multiclusterv1alpha1.ClusterProfileResource+"/status",
						multiclusterv1alpha1.PlacementDecisionResource).
					WithScope(admissionregistrationv1.NamespacedScope))).
			WithValidations(admissionregistrationv1ac.Validation().
				WithExpression(inventoryWritersExpression).
				WithMessage(inventoryWritersMessage).
				WithReason(metav1.StatusReasonForbidden)))
}

// inventoryWritersBinding binds the policy, denying.
func inventoryWritersBinding() *admissionregistrationv1ac.ValidatingAdmissionPolicyBindingApplyConfiguration {
	return admissionregistrationv1ac.ValidatingAdmissionPolicyBinding(InventoryWritersPolicy).
		WithSpec(admissionregistrationv1ac.ValidatingAdmissionPolicyBindingSpec().
			WithPolicyName(InventoryWritersPolicy).
			WithValidationActions(admissionregistrationv1.Deny))
}

// ensureInventoryWriters applies the policy and its binding.
func (r *apiServiceRegistrar) ensureInventoryWriters(ctx context.Context) error {
	return r.applyAdmissionPolicy(ctx, inventoryWritersPolicy(), inventoryWritersBinding())
}
