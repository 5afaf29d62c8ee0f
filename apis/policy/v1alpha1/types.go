package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PropagationPolicy propagates the resource templates it selects in its own
// namespace to member clusters.
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to propagate and where.
	Spec PropagationSpec `json:"spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PropagationPolicyList is a list of PropagationPolicies.
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the PropagationPolicies.
	Items []PropagationPolicy `json:"items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterPropagationPolicy propagates cluster-scoped resource templates and
// resource templates of any non-reserved namespace to member clusters.
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to propagate and where.
	Spec PropagationSpec `json:"spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicies.
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterPropagationPolicies.
	Items []ClusterPropagationPolicy `json:"items"`
}

// PropagationSpec is the desired behaviour of a (Cluster)PropagationPolicy.
type PropagationSpec struct {
	// ResourceSelectors select the resource templates to propagate; at least one is required.
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`
	// Association is the deprecated name of PropagateDeps.
	// +optional
	Association bool `json:"association,omitempty"`
	// PropagateDeps propagates the resources a template references (ConfigMaps, Secrets, ...) along with it.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`
	// Placement is how member clusters are selected.
	// +optional
	Placement Placement `json:"placement,omitempty"`
	// Priority ranks policies matching the same template; higher wins. Defaults to 0.
	// +optional
	Priority *int32 `json:"priority,omitempty"`
	// Preemption says whether this policy takes templates over from lower-priority policies. Defaults to Never.
	// +optional
	Preemption PreemptionBehavior `json:"preemption,omitempty"`
	// DependentOverrides name the OverridePolicies of the same namespace that must exist before the policy applies.
	// +optional
	DependentOverrides []string `json:"dependentOverrides,omitempty"`
	// SchedulerName is the scheduler that places the templates; immutable. Defaults to default-scheduler.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// Failover is how applications move away from failed applications or clusters; nil disables failover.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`
	// ConflictResolution is what happens when a propagated resource already exists in a member. Defaults to Abort.
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`
	// ActivationPreference Lazy defers policy changes until the template itself changes.
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`
	// Suspension suspends dispatching to all or some clusters; nil suspends nothing.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`
	// PreserveResourcesOnDeletion keeps member resources when the template is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
	// SchedulePriority is where the scheduling priority of the templates comes from.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ResourceSelector selects resource templates by apiVersion and kind, then
// optionally by namespace and by name or labels.
type ResourceSelector struct {
	// APIVersion of the selected resources, e.g. apps/v1.
	APIVersion string `json:"apiVersion"`
	// Kind of the selected resources, e.g. Deployment.
	Kind string `json:"kind"`
	// Namespace of the selected resources; empty inherits the policy's scope.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name selects one resource; when set, LabelSelector is ignored.
	// +optional
	Name string `json:"name,omitempty"`
	// LabelSelector selects resources by labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FieldSelector selects clusters by fields of their spec.
type FieldSelector struct {
	// MatchExpressions are ANDed requirements on provider, region or zone (operators In and NotIn).
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Fields of a Cluster a FieldSelector may select on.
const (
	// ProviderField selects on spec.provider.
	ProviderField = "provider"
	// RegionField selects on spec.region.
	RegionField = "region"
	// ZoneField selects on spec.zones.
	ZoneField = "zone"
)

// ClusterAffinity selects clusters; all set sub-terms are ANDed.
type ClusterAffinity struct {
	// LabelSelector selects clusters by labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// FieldSelector selects clusters by provider, region or zone.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`
	// ClusterNames lists the selectable clusters; empty means any.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
	// ExcludeClusters lists clusters never selected.
	// +optional
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// ClusterAffinityTerm is a named group of clusters in Placement.ClusterAffinities.
type ClusterAffinityTerm struct {
	// AffinityName names the group: 1 to 32 characters, a valid label key, unique in the list.
	AffinityName string `json:"affinityName"`
	// ClusterAffinity selects the clusters of the group.
	ClusterAffinity `json:",inline"`
	// OverflowAffinities are groups replicas spill over to, in order, when this group is full.
	// +optional
	OverflowAffinities []OverflowClusterAffinity `json:"overflowAffinities,omitempty"`
}

// OverflowClusterAffinity is a named group of clusters replicas overflow to.
type OverflowClusterAffinity struct {
	// AffinityName names the group; unique within the term and different from the term's name.
	AffinityName string `json:"affinityName"`
	// ClusterAffinity selects the clusters of the group.
	ClusterAffinity `json:",inline"`
}

// Placement is how member clusters are selected and replicas divided.
type Placement struct {
	// ClusterAffinity restricts scheduling to a set of clusters; excludes ClusterAffinities.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
	// ClusterAffinities are ordered groups of clusters; the first group that fits is used.
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`
	// ClusterTolerations let the templates be scheduled to clusters with matching taints.
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`
	// SpreadConstraints restrict how many groups of clusters are selected.
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`
	// ReplicaScheduling is how the replicas of a template are assigned to clusters.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`
	// WorkloadAffinity co-locates or separates workloads of the same group (alpha).
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// SpreadFieldValue is a cluster field clusters are grouped by.
type SpreadFieldValue string

// Cluster fields a SpreadConstraint may group by.
const (
	// SpreadByFieldCluster makes every cluster its own group.
	SpreadByFieldCluster SpreadFieldValue = "cluster"
	// SpreadByFieldRegion groups clusters by region.
	SpreadByFieldRegion SpreadFieldValue = "region"
	// SpreadByFieldZone groups clusters by zone.
	SpreadByFieldZone SpreadFieldValue = "zone"
	// SpreadByFieldProvider groups clusters by provider.
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// SpreadConstraint bounds the number of cluster groups selected.
type SpreadConstraint struct {
	// SpreadByField is the cluster field clusters are grouped by; excludes SpreadByLabel.
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`
	// SpreadByLabel is the cluster label key clusters are grouped by; excludes SpreadByField.
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`
	// MaxGroups is the most groups to select; 0 means no limit.
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`
	// MinGroups is the fewest groups to select. Defaults to 1.
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// ReplicaSchedulingType is how replicas are assigned to clusters.
type ReplicaSchedulingType string

// Replica scheduling types.
const (
	// ReplicaSchedulingTypeDuplicated gives every selected cluster all the replicas.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	// ReplicaSchedulingTypeDivided divides the replicas among the selected clusters.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference is how Divided replicas are divided.
type ReplicaDivisionPreference string

// Replica division preferences.
const (
	// ReplicaDivisionPreferenceAggregated uses as few clusters as their free capacity allows.
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	// ReplicaDivisionPreferenceWeighted divides by the weights of WeightPreference.
	ReplicaDivisionPreferenceWeighted ReplicaDivisionPreference = "Weighted"
)

// ReplicaSchedulingStrategy is how the replicas of a template are assigned to clusters.
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType is Duplicated or Divided. Defaults to Divided.
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`
	// ReplicaDivisionPreference is Aggregated or Weighted; only with Divided.
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`
	// WeightPreference weighs clusters for Weighted division; nil weighs all clusters equally.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// ClusterPreferences weighs clusters, statically or by a dynamic factor.
type ClusterPreferences struct {
	// StaticWeightList gives groups of clusters fixed weights.
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`
	// DynamicWeight computes weights from a factor; when set, StaticWeightList is ignored.
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight is the weight of a group of clusters.
type StaticClusterWeight struct {
	// TargetCluster selects the clusters the weight applies to.
	TargetCluster ClusterAffinity `json:"targetCluster"`
	// Weight is the weight of those clusters; at least 1.
	Weight int64 `json:"weight"`
}

// DynamicWeightFactor is what dynamic cluster weights are computed from.
type DynamicWeightFactor string

// Dynamic weight factors.
const (
	// DynamicWeightByAvailableReplicas weighs clusters by how many replicas they can still run.
	DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"
)

// WorkloadAffinity groups workloads by a template label and co-locates or
// separates the members of a group.
type WorkloadAffinity struct {
	// Affinity schedules workloads of the same group to the same clusters.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`
	// AntiAffinity keeps workloads of the same group on different clusters.
	// +optional
	AntiAffinity *WorkloadAntiAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm is the label key whose value names an affinity group.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is the template label key that defines the group; a valid label key.
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAntiAffinityTerm is the label key whose value names an anti-affinity group.
type WorkloadAntiAffinityTerm struct {
	// GroupByLabelKey is the template label key that defines the group; a valid label key.
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// PreemptionBehavior says whether a policy takes templates over from other policies.
type PreemptionBehavior string

// Preemption behaviours.
const (
	// PreemptAlways lets the policy take over templates claimed by lower-priority policies.
	PreemptAlways PreemptionBehavior = "Always"
	// PreemptNever never takes templates over.
	PreemptNever PreemptionBehavior = "Never"
)

// ConflictResolution is what happens when a propagated resource already exists in a member.
type ConflictResolution string

// Conflict resolutions.
const (
	// ConflictOverwrite takes the existing member resource over.
	ConflictOverwrite ConflictResolution = "Overwrite"
	// ConflictAbort stops propagating to that member.
	ConflictAbort ConflictResolution = "Abort"
)

// ActivationPreference is when policy changes reach the templates.
type ActivationPreference string

// Activation preferences.
const (
	// LazyActivation applies policy changes only when a template next changes.
	LazyActivation ActivationPreference = "Lazy"
)

// Suspension suspends parts of propagation.
type Suspension struct {
	// Dispatching true suspends dispatching to all clusters; excludes DispatchingOnClusters.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`
	// DispatchingOnClusters suspends dispatching to the listed clusters.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters lists clusters dispatching is suspended to.
type SuspendClusters struct {
	// ClusterNames are the clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// SchedulePriority is where the scheduling priority of templates comes from.
type SchedulePriority struct {
	// PriorityClassSource is where the PriorityClass is looked up; only KubePriorityClass.
	PriorityClassSource PriorityClassSource `json:"priorityClassSource"`
	// PriorityClassName is the name of the PriorityClass.
	PriorityClassName string `json:"priorityClassName"`
}

// PriorityClassSource is where a PriorityClass is looked up.
type PriorityClassSource string

// Priority class sources.
const (
	// KubePriorityClass uses a scheduling.k8s.io/v1 PriorityClass of the control plane.
	KubePriorityClass PriorityClassSource = "KubePriorityClass"
)
