package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Names of the kinds and resources of this API.
const (
	// ResourceKindResourceBinding is the kind of ResourceBinding.
	ResourceKindResourceBinding = "ResourceBinding"
	// ResourceSingularResourceBinding is the singular resource name of ResourceBinding.
	ResourceSingularResourceBinding = "resourcebinding"
	// ResourcePluralResourceBinding is the plural resource name of ResourceBinding.
	ResourcePluralResourceBinding = "resourcebindings"
	// ResourceNamespaceScopedResourceBinding says that ResourceBinding is namespaced.
	ResourceNamespaceScopedResourceBinding = true

	// ResourceKindClusterResourceBinding is the kind of ClusterResourceBinding.
	ResourceKindClusterResourceBinding = "ClusterResourceBinding"
	// ResourceSingularClusterResourceBinding is the singular resource name of ClusterResourceBinding.
	ResourceSingularClusterResourceBinding = "clusterresourcebinding"
	// ResourcePluralClusterResourceBinding is the plural resource name of ClusterResourceBinding.
	ResourcePluralClusterResourceBinding = "clusterresourcebindings"
	// ResourceNamespaceScopedClusterResourceBinding says that ClusterResourceBinding is cluster-scoped.
	ResourceNamespaceScopedClusterResourceBinding = false
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceBinding binds a namespaced resource template to the placement of
// the PropagationPolicy or ClusterPropagationPolicy that claims it, and holds
// the scheduler's result. It lives in the template's namespace.
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to propagate and where.
	Spec ResourceBindingSpec `json:"spec"`
	// Status is the observed scheduling and propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceBindingList is a list of ResourceBindings.
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceBindings.
	Items []ResourceBinding `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterResourceBinding binds a resource template to the placement of the
// ClusterPropagationPolicy that claims it. It is cluster-scoped and binds
// cluster-scoped templates, or namespaced ones claimed by a
// ClusterPropagationPolicy.
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to propagate and where.
	Spec ResourceBindingSpec `json:"spec"`
	// Status is the observed scheduling and propagation state.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterResourceBindingList is a list of ClusterResourceBindings.
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterResourceBindings.
	Items []ClusterResourceBinding `json:"items"`
}

// ResourceBindingSpec is the desired state of a ResourceBinding or
// ClusterResourceBinding.
type ResourceBindingSpec struct {
	// Resource is the resource template to propagate.
	Resource ObjectReference `json:"resource"`

	// PropagateDeps propagates the resources the template refers to
	// (ConfigMaps, Secrets, ServiceAccounts, PVCs...) along with it. It is
	// copied from the policy.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// ReplicaRequirements are the requirements of each replica of the
	// template, as reported by the resource interpreter.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Replicas is the replica count of the template.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Components are the pod templates of a workload made of several of them
	// (e.g. a training job with a launcher and workers), each with its own
	// replicas and requirements. It can also describe a single-template
	// workload. It is only filled when the MultiplePodTemplatesScheduling
	// feature gate is on, and is meant to replace Replicas and
	// ReplicaRequirements.
	// +optional
	Components []Component `json:"components,omitempty"`

	// Clusters are the member clusters the scheduler chose, with the replicas
	// assigned to each.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// Placement is the placement the template is scheduled with, copied from
	// the policy.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// GracefulEvictionTasks are evictions from clusters waiting to be
	// completed gracefully: the cluster has already been removed from
	// Clusters (or its replicas scaled down), and the workload is kept there
	// until it is available elsewhere or the grace period expires.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// RequiredBy are the bindings that depend on this resource, with their
	// scheduling results; a dependency is propagated wherever a dependent is.
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// SchedulerName is the scheduler responsible for this binding, copied
	// from the policy.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover is how to migrate the workload when a cluster or the
	// application fails, copied from the policy.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution is what to do when the resource already exists in a
	// member cluster: Abort (the default) stops propagating it there,
	// Overwrite takes it over.
	// +kubebuilder:default="Abort"
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// RescheduleTriggeredAt is when a reschedule was requested. A value later
	// than status.lastScheduledTime makes the scheduler recompute the
	// placement from scratch, ignoring the previous result. RFC3339, UTC.
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// Suspension suspends dispatching or scheduling; nil suspends nothing.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps the propagated resources in the
	// member clusters when the template is deleted. It is copied from the
	// policy.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority is the priority of this binding in the scheduling queue.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// WorkloadAffinityGroups are the affinity and anti-affinity groups this
	// workload belongs to, instantiated from the policy's workloadAffinity and
	// the template's labels.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

// ObjectReference locates the resource template in the control plane.
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
	// UID is the uid of the template.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// ResourceVersion is the resourceVersion of the template the binding was
	// last built from.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements are the requirements of each replica of a workload.
type ReplicaRequirements struct {
	// NodeClaim is the node affinity, node selector and tolerations each
	// replica needs.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// ResourceRequest are the resources each replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// Namespace is the namespace of the replicas, used to estimate against
	// the member clusters' resource quotas.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// PriorityClassName is the priority class of the replicas.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim is what each replica requires of the node it runs on.
type NodeClaim struct {
	// HardNodeAffinity is the replicas' required node affinity
	// (requiredDuringSchedulingIgnoredDuringExecution); preferred terms are
	// left out since they do not restrict scheduling.
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`
	// NodeSelector are the node labels the replicas require.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations are the replicas' tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Component is one pod template of a workload: its replicas and what each
// replica requires.
type Component struct {
	// Name identifies the component; unique within the workload.
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`
	// Replicas is the replica count of the component.
	Replicas int32 `json:"replicas"`
	// ReplicaRequirements are the requirements of each replica of the component.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// ComponentReplicaRequirements are the requirements of each replica of a
// component.
type ComponentReplicaRequirements struct {
	// NodeClaim is the node affinity, node selector and tolerations each
	// replica needs.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`
	// ResourceRequest are the resources each replica requests.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`
	// PriorityClassName is the priority class of the replicas.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// TargetCluster is a member cluster chosen by the scheduler.
type TargetCluster struct {
	// Name is the name of the cluster.
	Name string `json:"name"`
	// Replicas is the number of replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Components are the replicas of each component assigned to the cluster,
	// for workloads described by spec.components.
	// +optional
	Components []TargetComponent `json:"components,omitempty"`
}

// TargetComponent is the number of replicas of one component assigned to a
// cluster.
type TargetComponent struct {
	// Name is the component, matching spec.components[*].name.
	Name string `json:"name"`
	// Replicas is the number of replicas of the component assigned to the cluster.
	Replicas int32 `json:"replicas"`
}

// GracefulEvictionTask is the eviction of the workload from one cluster,
// performed once the workload is healthy elsewhere or the grace period ends.
type GracefulEvictionTask struct {
	// FromCluster is the cluster the workload is evicted from.
	FromCluster string `json:"fromCluster"`

	// PurgeMode is how the workload is removed from the cluster
	// (Directly, Gracefully or Never).
	// +optional
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`

	// Replicas is the number of replicas evicted; ignored for resources
	// without replicas.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Reason is a CamelCase programmatic identifier of why the workload is
	// evicted, e.g. TaintUntolerated or ApplicationFailure.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	Reason string `json:"reason"`

	// Message is a human-readable explanation of the eviction; may be empty.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// Producer is the controller that requested the eviction, e.g. TaintManager.
	Producer string `json:"producer"`

	// GracePeriodSeconds is how long to wait, at most, for the workload to
	// become healthy elsewhere before removing it from the cluster. Positive;
	// cannot be combined with SuppressDeletion.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// SuppressDeletion keeps the workload in the cluster until a person or a
	// tool lifts it; cannot be combined with GracePeriodSeconds.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	// PreservedLabelState is the state extracted from the evicted workload by
	// the failover's statePreservation rules, as label key/value pairs to be
	// injected into the workload on the clusters that take it over.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`

	// ClustersBeforeFailover are the clusters the workload ran on before the
	// failover that created this task.
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`

	// CreationTimestamp is when the task was created, set by the server (RFC3339, UTC).
	// Clients should not set it.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot is the scheduling result of a binding that depends on this one.
type BindingSnapshot struct {
	// Namespace is the namespace of a ResourceBinding; empty for a
	// ClusterResourceBinding.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the name of the binding.
	Name string `json:"name"`
	// Clusters are the clusters the binding is scheduled to.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Suspension is what is suspended for a binding: dispatching (inherited from
// the policy) and scheduling.
type Suspension struct {
	// Suspension holds dispatching and dispatchingOnClusters, as in the policy.
	policyv1alpha1.Suspension `json:",inline"`

	// Scheduling pauses scheduling of the binding while true. It is meant for
	// third-party admission webhooks setting it when the binding is created;
	// once scheduled, a binding cannot be paused.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the scheduling priority of a binding.
type SchedulePriority struct {
	// Priority orders bindings in the scheduling queue; higher goes first.
	// Defaults to 0.
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// WorkloadAffinityGroups are the groups a workload belongs to for workload
// affinity scheduling, each in the form "<label key>=<label value>".
type WorkloadAffinityGroups struct {
	// AffinityGroup is the group whose workloads are scheduled to the same clusters.
	// +optional
	AffinityGroup string `json:"affinityGroup,omitempty"`
	// AntiAffinityGroup is the group whose workloads are kept off each other's clusters.
	// +optional
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// ResourceBindingStatus is the observed state of a ResourceBinding or
// ClusterResourceBinding.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the metadata.generation the scheduler
	// last scheduled; lower than metadata.generation means scheduling is
	// pending.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// SchedulerObservedAffinityName is the name of the clusterAffinities term
	// the current scheduling result is based on.
	// +optional
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`

	// LastScheduledTime is when the scheduler last scheduled the binding
	// successfully (RFC3339, UTC).
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	// Conditions are the latest observations of the binding's state
	// (Scheduled, FullyApplied).
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

	// Status is the resource's status in the cluster, as reflected by the
	// resource interpreter.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Applied says whether the resource was applied to the cluster successfully.
	// +optional
	Applied bool `json:"applied,omitempty"`

	// AppliedMessage explains the applied state, usually the error of a failed apply.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`

	// Health is the health of the resource in the cluster.
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceHealth is the health of a resource in a member cluster.
type ResourceHealth string

const (
	// ResourceHealthy means the resource is healthy in the cluster.
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy means the resource is unhealthy in the cluster.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown means the health of the resource cannot be told, e.g.
	// there is no health rule for its kind.
	ResourceUnknown ResourceHealth = "Unknown"
)
