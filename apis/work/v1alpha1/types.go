package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Names of the kinds and resources of this API.
const (
	// ResourceKindWork is the kind of Work.
	ResourceKindWork = "Work"
	// ResourceSingularWork is the singular resource name of Work.
	ResourceSingularWork = "work"
	// ResourcePluralWork is the plural resource name of Work.
	ResourcePluralWork = "works"
	// ResourceNamespaceScopedWork says that Work is namespaced.
	ResourceNamespaceScopedWork = true
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Work is the set of resources to apply to one member cluster. It lives in
// the cluster's execution namespace (karmada-es-<cluster>).
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to apply to the member cluster.
	Spec WorkSpec `json:"spec"`
	// Status is the observed state of the applied resources.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// WorkList is a list of Works.
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Works.
	Items []Work `json:"items"`
}

// WorkSpec is the desired state of a Work.
type WorkSpec struct {
	// Workload holds the manifests to apply to the member cluster.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// SuspendDispatching stops applying the Work to the member cluster while
	// true; changes made meanwhile are applied when it is lifted.
	// +optional
	SuspendDispatching *bool `json:"suspendDispatching,omitempty"`

	// PreserveResourcesOnDeletion keeps the applied resources in the member
	// cluster when the Work is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
}

// WorkloadTemplate holds the manifests of a Work.
type WorkloadTemplate struct {
	// Manifests are the resources to apply to the member cluster.
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one resource to apply to the member cluster, as a raw object.
type Manifest struct {
	// RawExtension holds the object's JSON.
	// +kubebuilder:pruning:PreserveUnknownFields
	runtime.RawExtension `json:",inline"`
}

// WorkStatus is the observed state of a Work.
type WorkStatus struct {
	// Conditions are the latest observations of the Work's state: Applied,
	// Progressing, Available, Degraded and Dispatching.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestStatuses are the statuses of the applied manifests in the
	// member cluster.
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
}

// ManifestStatus is the status of one manifest in the member cluster.
type ManifestStatus struct {
	// Identifier says which manifest of spec.workload.manifests this is.
	Identifier ResourceIdentifier `json:"identifier"`

	// Status is the object's status in the member cluster, as reflected by
	// the resource interpreter.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Health is the health of the object in the member cluster.
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health ResourceHealth `json:"health,omitempty"`

	// Drift lists the fields Flotilla owns (those of the manifest, apart
	// from status and what the interpreter's Retain keeps) in which the
	// member object last differed from what was applied, with both values
	// (a Secret's masked), at most 16; the Work's Drifted condition says
	// when and what was done about it. Flotilla's own field: Karmada's
	// clients ignore it.
	// +optional
	// +listType=atomic
	Drift []DriftedField `json:"drift,omitempty"`
}

// Bounds of a manifest status's drift list.
const (
	// MaxDriftedFields is the most fields a drift lists.
	MaxDriftedFields = 16
	// MaxDriftedFieldLength is the most bytes of a drifted field's path
	// or values.
	MaxDriftedFieldLength = 1024
)

// DriftedField is one owned field whose value in the member differed from
// the applied one.
type DriftedField struct {
	// Path names the field: dot-separated keys, a list item as
	// [name=<name>] when the list's items are named, [<index>] otherwise;
	// e.g. spec.template.spec.containers[name=nginx].image.
	Path string `json:"path"`
	// ValueInMember is the member's value as JSON ("<absent>" when it had
	// none, "<masked>" for a Secret's data), cut at 256 bytes.
	ValueInMember string `json:"valueInMember"`
	// ValueApplied is the applied value, in the same form.
	ValueApplied string `json:"valueApplied"`
}

// ResourceIdentifier identifies a manifest of a Work and the object it
// became in the member cluster.
type ResourceIdentifier struct {
	// Ordinal is the manifest's index in spec.workload.manifests, so a status
	// can be linked to a manifest even if the manifest cannot be parsed.
	Ordinal int `json:"ordinal"`
	// Group is the API group of the object.
	// +optional
	Group string `json:"group,omitempty"`
	// Version is the API version of the object.
	Version string `json:"version"`
	// Kind is the kind of the object.
	Kind string `json:"kind"`
	// Resource is the plural resource name of the object.
	Resource string `json:"resource"`
	// Namespace is the namespace of the object; empty if cluster-scoped.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the object.
	Name string `json:"name"`
}

// ResourceHealth is the health of an object in a member cluster.
type ResourceHealth string

const (
	// ResourceHealthy means the object is healthy in the cluster.
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy means the object is unhealthy in the cluster.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown means the health of the object cannot be told, e.g.
	// there is no health rule for its kind.
	ResourceUnknown ResourceHealth = "Unknown"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceBinding is the old (v1alpha1) schema of a ResourceBinding. It is
// served for old clients and converted to and from v1alpha2, the storage
// version; fields v1alpha1 has no room for are lost on the way.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to propagate and where.
	Spec ResourceBindingSpec `json:"spec"`
	// Status is the observed propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceBindingList is a list of v1alpha1 ResourceBindings.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceBindings.
	Items []ResourceBinding `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterResourceBinding is the old (v1alpha1) schema of a
// ClusterResourceBinding, served and converted like ResourceBinding.
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to propagate and where.
	Spec ResourceBindingSpec `json:"spec"`
	// Status is the observed propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterResourceBindingList is a list of v1alpha1 ClusterResourceBindings.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterResourceBindings.
	Items []ClusterResourceBinding `json:"items"`
}

// ResourceBindingSpec is the v1alpha1 desired state of a binding.
type ResourceBindingSpec struct {
	// Resource is the resource template to propagate, with its replicas.
	Resource ObjectReference `json:"resource"`
	// Clusters are the member clusters the scheduler chose.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// ObjectReference locates the resource template and carries its replica
// count and per-replica resources (moved to the spec in v1alpha2).
type ObjectReference struct {
	// APIVersion is the API version of the template.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind of the template.
	Kind string `json:"kind"`
	// Namespace is the namespace of the template; empty for a cluster-scoped
	// template.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the template.
	Name string `json:"name"`
	// ResourceVersion is the resourceVersion of the template the binding was
	// last built from.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// ReplicaResourceRequirements are the resources each replica requests
	// (v1alpha2 spec.replicaRequirements.resourceRequest).
	// +optional
	ReplicaResourceRequirements corev1.ResourceList `json:"resourcePerReplicas,omitempty"`
	// Replicas is the replica count of the template (v1alpha2 spec.replicas).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// TargetCluster is a member cluster chosen by the scheduler.
type TargetCluster struct {
	// Name is the name of the cluster.
	Name string `json:"name"`
	// Replicas is the number of replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// ResourceBindingStatus is the v1alpha1 observed state of a binding.
type ResourceBindingStatus struct {
	// Conditions are the latest observations of the binding's state.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// AggregatedStatus is the status of the resource in each member cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`
}

// AggregatedStatusItem is the status of the resource in one member cluster.
type AggregatedStatusItem struct {
	// ClusterName is the member cluster.
	ClusterName string `json:"clusterName"`
	// Status is the resource's status in the cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`
	// Applied says whether the resource was applied to the cluster successfully.
	// +optional
	Applied bool `json:"applied,omitempty"`
	// AppliedMessage explains the applied state, usually the error of a failed apply.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`
}
