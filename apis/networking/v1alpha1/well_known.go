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
	// MultiClusterServiceControllerFinalizer holds a CrossCluster
	// MultiClusterService until what it made is withdrawn.
	MultiClusterServiceControllerFinalizer = "karmada.io/multiclusterservice-controller"
)

// Labels and annotations of the EndpointSlices Karmada collects from the
// members exporting a service and dispatches to the members importing it
// (the MCS API's ServiceExport and ServiceImport, and MultiClusterService).
const (
	// EndpointSliceNamespaceLabel and EndpointSliceNameLabel, on a Work
	// carrying an EndpointSlice collected from a member (in the member's
	// execution namespace), or made for a member importing a service, name
	// the service.
	EndpointSliceNamespaceLabel = "endpointslice.karmada.io/namespace"
	EndpointSliceNameLabel      = "endpointslice.karmada.io/name"
	// EndpointSliceWorkManagedByLabel lists, joined with ".", the
	// controllers that keep such a Work: one Work may be kept by several,
	// and is deleted when the last one lets it go.
	EndpointSliceWorkManagedByLabel = "endpointslice.karmada.io/managed-by"
	// EndpointSliceProvisionClusterAnnotation, on a Work made for an
	// importing member and on the EndpointSlice it carries, names the
	// member the endpoints come from. The control plane's copies of the
	// collected EndpointSlices carry it as an annotation and as a label
	// (they are selected by it).
	EndpointSliceProvisionClusterAnnotation = "endpointslice.karmada.io/provision-cluster"
	// EndpointSliceDispatchControllerLabelValue is the
	// endpointslice.kubernetes.io/managed-by label of the EndpointSlices
	// dispatched to importing members: the member's own EndpointSlice
	// controllers leave them alone, and they are never collected back.
	EndpointSliceDispatchControllerLabelValue = "endpointslice-dispatch-controller.karmada.io"
)

// Values of EndpointSliceWorkManagedByLabel.
const (
	// ManagedByServiceExport marks the Works of EndpointSlices collected
	// because a ServiceExport exports their service (Karmada's value, the
	// kind's name).
	ManagedByServiceExport = "ServiceExport"
	// ManagedByServiceImport marks the Works made for a member importing a
	// service with a ServiceImport: its derived Service and the
	// EndpointSlices imported from the exporting members. Flotilla's value;
	// Karmada makes those objects as templates on its control plane.
	ManagedByServiceImport = "ServiceImport"
	// ManagedByMultiClusterService marks the Works of EndpointSlices
	// collected from the provider clusters of a CrossCluster
	// MultiClusterService, and those made for its consumer clusters
	// (Karmada's value, the kind's name).
	ManagedByMultiClusterService = "MultiClusterService"
)
