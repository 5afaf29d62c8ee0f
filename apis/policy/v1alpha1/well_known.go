package v1alpha1

// Labels and annotations that tie resource templates, bindings and Works to
// the policies that claimed them (Karmada-compatible keys).
const (
	// PropagationPolicyPermanentIDLabel is the permanent id of a PropagationPolicy,
	// set on the policy at creation and on everything it claims.
	PropagationPolicyPermanentIDLabel = "propagationpolicy.karmada.io/permanent-id"
	// ClusterPropagationPolicyPermanentIDLabel is the permanent id of a
	// ClusterPropagationPolicy, set on the policy at creation and on everything it claims.
	ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id"
	// PropagationPolicyNamespaceAnnotation is the namespace of the PropagationPolicy that claimed an object.
	PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace"
	// PropagationPolicyNameAnnotation is the name of the PropagationPolicy that claimed an object.
	PropagationPolicyNameAnnotation = "propagationpolicy.karmada.io/name"
	// ClusterPropagationPolicyAnnotation is the name of the ClusterPropagationPolicy that claimed an object.
	ClusterPropagationPolicyAnnotation = "clusterpropagationpolicy.karmada.io/name"

	// AppliedPlacementAnnotation records, as JSON, the placement a binding was last scheduled with.
	AppliedPlacementAnnotation = "policy.karmada.io/applied-placement"
	// AppliedOverridesAnnotation records, as JSON, the OverridePolicies applied to a Work's manifest.
	AppliedOverridesAnnotation = "policy.karmada.io/applied-overrides"
	// AppliedClusterOverridesAnnotation records, as JSON, the ClusterOverridePolicies applied to a Work's manifest.
	AppliedClusterOverridesAnnotation = "policy.karmada.io/applied-cluster-overrides"

	// NamespaceSkipAutoPropagationLabel set to "true" on a Namespace keeps it from being propagated automatically.
	NamespaceSkipAutoPropagationLabel = "namespace.karmada.io/skip-auto-propagation"

	// FederatedResourceQuotaNamespaceLabel is the namespace of the FederatedResourceQuota a ResourceQuota comes from.
	FederatedResourceQuotaNamespaceLabel = "federatedresourcequota.karmada.io/namespace"
	// FederatedResourceQuotaNameLabel is the name of the FederatedResourceQuota a ResourceQuota comes from.
	FederatedResourceQuotaNameLabel = "federatedresourcequota.karmada.io/name"
)

// Finalizers set on propagation policies so that their claims are released
// before they go away.
const (
	// PropagationPolicyControllerFinalizer is set on every PropagationPolicy at creation.
	PropagationPolicyControllerFinalizer = "karmada.io/propagation-policy-controller"
	// ClusterPropagationPolicyControllerFinalizer is set on every ClusterPropagationPolicy at creation.
	ClusterPropagationPolicyControllerFinalizer = "karmada.io/cluster-propagation-policy-controller"
)
