package v1alpha1

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupName is the group of the MCS API.
const GroupName = "multicluster.x-k8s.io"

// SchemeGroupVersion is the group and version of ServiceExport and ServiceImport.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Kinds and resources of the group.
const (
	// ServiceExportKind declares that the Service of the same namespace and
	// name is consumable from other clusters.
	ServiceExportKind = "ServiceExport"
	// ServiceImportKind describes a service imported from the clusters
	// exporting it.
	ServiceImportKind = "ServiceImport"
	// ServiceExportResource and ServiceImportResource are their resources.
	ServiceExportResource = "serviceexports"
	ServiceImportResource = "serviceimports"
)

// Resources of the group, as informers and clients name them.
var (
	ServiceExports = SchemeGroupVersion.WithResource(ServiceExportResource)
	ServiceImports = SchemeGroupVersion.WithResource(ServiceImportResource)
)

// Values of a ServiceImport's spec.type.
const (
	// ClusterSetIP imports get a cluster-set IP: the importing cluster gets
	// a derived ClusterIP Service.
	ClusterSetIP = "ClusterSetIP"
	// Headless imports get no derived Service, only the endpoints.
	Headless = "Headless"
)

// Conditions of a ServiceExport (the MCS API's), set on the ServiceExport
// in each member exporting the Service.
const (
	// ServiceExportValid says whether the Service exported exists in the
	// member.
	ServiceExportValid = "Valid"
	// ServiceExportConflict says whether the Service's ports conflict with
	// those of the same service exported by other members.
	ServiceExportConflict = "Conflict"
)

// Reasons of the ServiceExport conditions, and of the events recorded on
// the ServiceExport template when a condition turns bad.
const (
	// ServiceExportReasonExported: the Service exists and is exported.
	ServiceExportReasonExported = "Exported"
	// ServiceExportReasonNoService: the member has no such Service.
	ServiceExportReasonNoService = "NoService"
	// ServiceExportReasonPortConflict: a port of the same name has another
	// number or protocol in another exporting member.
	ServiceExportReasonPortConflict = "PortConflict"
	// ServiceExportReasonNoConflicts: none has.
	ServiceExportReasonNoConflicts = "NoConflicts"
)

// The Cluster Inventory API (KEP-4322): ClusterProfile, one per cluster a
// cluster manager manages, in an inventory namespace.
const (
	// ClusterProfileKind and ClusterProfileResource name the kind.
	ClusterProfileKind     = "ClusterProfile"
	ClusterProfileResource = "clusterprofiles"
	// LabelClusterManager is on every ClusterProfile, naming its manager
	// (spec.clusterManager.name).
	LabelClusterManager = "x-k8s.io/cluster-manager"
	// LabelClusterSet is on an inventory namespace whose profiles form a
	// cluster set, naming it.
	LabelClusterSet = "multicluster.x-k8s.io/clusterset"
	// ConditionControlPlaneHealthy says whether the cluster's control plane
	// is healthy; ConditionJoined whether it is under the manager's
	// management.
	ConditionControlPlaneHealthy = "ControlPlaneHealthy"
	ConditionJoined              = "Joined"
	// PropertyClusterID is the About API's cluster ID property (KEP-2149):
	// the cluster's unique ID within its cluster set.
	PropertyClusterID = "cluster.clusterset.k8s.io"
	// PropertyClusterSet is the About API's cluster set property.
	PropertyClusterSet = "clusterset.k8s.io"
)

// ClusterProfiles is the resource of ClusterProfiles.
var ClusterProfiles = SchemeGroupVersion.WithResource(ClusterProfileResource)

// The Cluster Inventory API's PlacementDecision (KEP-5313): the clusters a
// scheduler chose for one placement, in slices of at most
// MaxDecisionsPerSlice.
const (
	// PlacementDecisionKind and PlacementDecisionResource name the kind.
	PlacementDecisionKind     = "PlacementDecision"
	PlacementDecisionResource = "placementdecisions"
	// LabelDecisionKey is the same on every slice of one decision.
	LabelDecisionKey = "multicluster.x-k8s.io/decision-key"
	// LabelDecisionIndex orders the slices of one decision, from 0.
	LabelDecisionIndex = "multicluster.x-k8s.io/decision-index"
	// MaxDecisionsPerSlice bounds a slice's decisions.
	MaxDecisionsPerSlice = 100
)

// PlacementDecisions is the resource of PlacementDecisions.
var PlacementDecisions = SchemeGroupVersion.WithResource(PlacementDecisionResource)
