package v1alpha1

// Kinds of this group.
const (
	// MultiClusterServiceKind is the kind of MultiClusterService.
	MultiClusterServiceKind = "MultiClusterService"
	// MultiClusterIngressKind is the kind of MultiClusterIngress.
	MultiClusterIngressKind = "MultiClusterIngress"
)

// Condition types of a MultiClusterService.
const (
	// MCSServiceAppliedConditionType says whether the Service was applied to the consumer clusters.
	MCSServiceAppliedConditionType = "ServiceApplied"
	// EndpointSliceDispatchedConditionType says whether the EndpointSlices were dispatched to the consumer clusters.
	EndpointSliceDispatchedConditionType = "EndpointSliceDispatched"
)

// Labels and annotations of MultiClusterService machinery.
const (
	// MultiClusterServicePermanentIDLabel carries a MultiClusterService's permanent id, set on
	// creation; the Works made for the Service are selected by it. Unlike the UID it survives
	// backup and restore.
	MultiClusterServicePermanentIDLabel = "multiclusterservice.karmada.io/permanent-id"
	// MultiClusterServiceNameAnnotation names the MultiClusterService an object was made for.
	MultiClusterServiceNameAnnotation = "multiclusterservice.karmada.io/name"
	// MultiClusterServiceNamespaceAnnotation is the namespace of that MultiClusterService.
	MultiClusterServiceNamespaceAnnotation = "multiclusterservice.karmada.io/namespace"
)
