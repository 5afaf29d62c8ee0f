package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RolloutStrategy is how a placement is rolled out: in ordered stages of
// clusters, each gated on the health of the previous one. A
// PropagationPolicy or ClusterPropagationPolicy uses it through the
// annotation rollout.flotilla.io/strategy: <name>.
type RolloutStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the stages of the rollout.
	Spec RolloutStrategySpec `json:"spec"`
	// Status is what the rollout controller observed of the strategy.
	// +optional
	Status RolloutStrategyStatus `json:"status,omitempty"`
}

// RolloutStrategySpec is the stages of a rollout.
type RolloutStrategySpec struct {
	// Stages are rolled out in order, the next starting once the previous one
	// succeeded and its gates passed. From 1 to 20, with unique names.
	// +listType=atomic
	Stages []RolloutStage `json:"stages"`
	// NewClusters is what a cluster that joins the placement while a
	// rollout is in progress runs until its stage starts: Immediately (the
	// default) the template as it is; InStage the revision the rollout
	// started from, updated when its stage does.
	// +optional
	// +kubebuilder:validation:Enum=Immediately;InStage
	NewClusters NewClustersPolicy `json:"newClusters,omitempty"`
}

// NewClustersPolicy is what a cluster new to the placement runs during a
// rollout.
type NewClustersPolicy string

const (
	// NewClustersImmediately: the template as it is.
	NewClustersImmediately NewClustersPolicy = "Immediately"
	// NewClustersInStage: the revision the rollout started from, until
	// the cluster's stage starts.
	NewClustersInStage NewClustersPolicy = "InStage"
)

// MaxStages is the most stages a RolloutStrategy may have.
const MaxStages = 20

// RolloutStage is one stage of a rollout: some clusters of the placement,
// how many of them are updated at once, and how long they must stay healthy.
type RolloutStage struct {
	// Name identifies the stage (a DNS-1123 label), unique in the strategy.
	Name string `json:"name"`
	// Clusters are the clusters of the placement in this stage.
	Clusters StageClusters `json:"clusters"`
	// MaxConcurrency is how many clusters of the stage are updated at once: a
	// number (at least 1) or a percentage of the stage's clusters ("1%" to
	// "100%", rounded up). Defaults to "100%".
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`
	// SoakTime is how long the stage must stay healthy before the next stage
	// starts. At least 0; defaults to 0.
	// +optional
	SoakTime *metav1.Duration `json:"soakTime,omitempty"`
	// ProgressDeadline is how long the stage may stay unhealthy before it
	// counts as failed. More than 0; defaults to 10m.
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
	// MaxFailures is how many unhealthy clusters the stage tolerates and still
	// succeeds. At least 0; defaults to 0.
	// +optional
	MaxFailures *int32 `json:"maxFailures,omitempty"`
	// Before are the gates that must pass before the stage starts.
	// +optional
	// +listType=atomic
	Before []RolloutGate `json:"before,omitempty"`
	// After are the gates that must pass after the stage succeeded, before
	// the next stage starts.
	// +optional
	// +listType=atomic
	After []RolloutGate `json:"after,omitempty"`
}

// StageClusters selects the clusters of a stage among those of the
// placement: those named and those the selector matches. At least one of
// names and labelSelector is set.
type StageClusters struct {
	// Names are cluster names; a cluster is named in at most one stage.
	// +optional
	// +listType=atomic
	Names []string `json:"names,omitempty"`
	// LabelSelector selects clusters by their labels.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// OrderByLabel is a cluster label key: within the stage, clusters are
	// updated in the order of that label's value. Empty means by name.
	// +optional
	OrderByLabel string `json:"orderByLabel,omitempty"`
}

// RolloutGate holds a rollout until it passes.
type RolloutGate struct {
	// Type is Wait (pass after Duration) or Approval (pass once approved).
	// +kubebuilder:validation:Enum=Wait;Approval
	Type GateType `json:"type"`
	// Duration is how long a Wait gate waits; more than 0. Approval gates
	// have none.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
}

// GateType is the type of a RolloutGate.
type GateType string

const (
	// GateWait passes after its duration.
	GateWait GateType = "Wait"
	// GateApproval passes once a person approves the stage.
	GateApproval GateType = "Approval"
)

// RolloutStrategyStatus is what the rollout controller observed of a
// RolloutStrategy.
type RolloutStrategyStatus struct {
	// ObservedGeneration is the generation of the spec last observed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations of the strategy.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RolloutStrategyList is a list of RolloutStrategies.
type RolloutStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the RolloutStrategies.
	Items []RolloutStrategy `json:"items"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceRevision is one revision of a resource template under a rollout
// strategy: the template as it was propagated, so that clusters a rollout
// has not reached yet keep running it. The rollout controller writes them,
// named <binding>-<hash>, in the template's namespace (karmada-system for
// cluster-scoped templates), and keeps a bounded history.
type ResourceRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Resource is the template this is a revision of.
	Resource RolloutResource `json:"resource"`
	// Binding is the name of the template's (Cluster)ResourceBinding.
	Binding string `json:"binding"`
	// Revision numbers the template's revisions, the newest highest. It is
	// raised when an older revision becomes the newest again (undo).
	Revision int64 `json:"revision"`
	// Hash identifies the template's content: its labels, annotations and
	// every field but metadata and status.
	Hash string `json:"hash"`
	// Template is the template as propagated: apiVersion, kind, its labels,
	// annotations and generation, and every field but metadata and status.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:EmbeddedResource
	Template runtime.RawExtension `json:"template"`
}

// RolloutResource names a resource template.
type RolloutResource struct {
	// APIVersion is the template's API version.
	APIVersion string `json:"apiVersion"`
	// Kind is the template's kind.
	Kind string `json:"kind"`
	// Namespace is the template's namespace; empty for a cluster-scoped one.
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name is the template's name.
	Name string `json:"name"`
	// UID is the template's UID.
	// +optional
	UID types.UID `json:"uid,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceRevisionList is a list of ResourceRevisions.
type ResourceRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceRevisions.
	Items []ResourceRevision `json:"items"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RolloutRun is the rollout of one template change across the clusters of
// its placement, stage by stage, by the RolloutStrategy of its policy. The
// rollout controller starts one per change, named <binding>-<revision>, in
// the template's namespace (karmada-system for cluster-scoped templates);
// people pause, resume, approve and abort it through its spec.
type RolloutRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the change rolled out and what people asked of it.
	Spec RolloutRunSpec `json:"spec"`
	// Status is how far the rollout got.
	// +optional
	Status RolloutRunStatus `json:"status,omitempty"`
}

// RolloutRunSpec is the change a RolloutRun rolls out and what people
// asked of it.
type RolloutRunSpec struct {
	// Resource is the template rolled out.
	Resource RolloutResource `json:"resource"`
	// Binding is the name of the template's (Cluster)ResourceBinding.
	Binding string `json:"binding"`
	// Strategy is the RolloutStrategy the run follows.
	Strategy string `json:"strategy"`
	// FromRevision is the ResourceRevision most clusters ran before.
	// +optional
	FromRevision string `json:"fromRevision,omitempty"`
	// ToRevision is the ResourceRevision rolled out.
	ToRevision string `json:"toRevision"`
	// Paused holds the run where it is: no cluster is updated while set.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// Abort stops the run for good where it is; clusters keep the revision
	// they run.
	// +optional
	Abort bool `json:"abort,omitempty"`
	// Approvals are the approval gates people passed.
	// +optional
	// +listType=atomic
	Approvals []RolloutApproval `json:"approvals,omitempty"`
}

// RolloutApproval passes one approval gate of a stage.
type RolloutApproval struct {
	// Stage is the stage's name.
	Stage string `json:"stage"`
	// Gate is Before (the stage may start) or After (the next stage may
	// start).
	// +kubebuilder:validation:Enum=Before;After
	Gate GatePosition `json:"gate"`
	// Approver is who approved, as the CLI recorded it.
	// +optional
	Approver string `json:"approver,omitempty"`
	// Time is when the approval was given.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// GatePosition is where a gate sits around a stage.
type GatePosition string

const (
	// GateBefore gates the start of a stage.
	GateBefore GatePosition = "Before"
	// GateAfter gates what follows a stage.
	GateAfter GatePosition = "After"
)

// RolloutPhase is where a RolloutRun is.
type RolloutPhase string

// The phases of a RolloutRun.
const (
	RolloutProgressing        RolloutPhase = "Progressing"
	RolloutWaiting            RolloutPhase = "Waiting"
	RolloutWaitingForApproval RolloutPhase = "WaitingForApproval"
	RolloutPaused             RolloutPhase = "Paused"
	RolloutHalted             RolloutPhase = "Halted"
	RolloutCompleted          RolloutPhase = "Completed"
	RolloutAborted            RolloutPhase = "Aborted"
	RolloutSuperseded         RolloutPhase = "Superseded"
)

// Terminal says whether a run in phase p is over.
func (p RolloutPhase) Terminal() bool {
	return p == RolloutHalted || p == RolloutCompleted || p == RolloutAborted || p == RolloutSuperseded
}

// Condition types of a RolloutRun.
const (
	// RolloutConditionProgressing is True while the run moves on.
	RolloutConditionProgressing = "Progressing"
	// RolloutConditionWaitingForApproval is True while a gate waits for a
	// person.
	RolloutConditionWaitingForApproval = "WaitingForApproval"
	// RolloutConditionHalted is True once a stage failed; its message names
	// the failing clusters.
	RolloutConditionHalted = "Halted"
	// RolloutConditionCompleted is True once every stage succeeded.
	RolloutConditionCompleted = "Completed"
)

// RolloutRunStatus is how far a RolloutRun got.
type RolloutRunStatus struct {
	// ObservedGeneration is the generation of the spec last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase sums the run up.
	// +optional
	Phase RolloutPhase `json:"phase,omitempty"`
	// CurrentStage is the stage in progress (the last one once completed).
	// +optional
	CurrentStage string `json:"currentStage,omitempty"`
	// StartTime is when the run started; CompletionTime when it ended.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Stages are the stages of the strategy, in order, with their clusters.
	// +optional
	// +listType=atomic
	Stages []StageStatus `json:"stages,omitempty"`
	// Conditions are Progressing, WaitingForApproval, Halted and Completed.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// StagePhase is where a stage of a run is.
type StagePhase string

// The phases of a stage.
const (
	StagePending         StagePhase = "Pending"
	StageWaiting         StagePhase = "Waiting"
	StageWaitingApproval StagePhase = "WaitingForApproval"
	StageProgressing     StagePhase = "Progressing"
	StageSoaking         StagePhase = "Soaking"
	StageSucceeded       StagePhase = "Succeeded"
	StageFailed          StagePhase = "Failed"
)

// StageStatus is one stage of a run.
type StageStatus struct {
	// Name is the stage's name in the strategy.
	Name string `json:"name"`
	// Phase is where the stage is.
	Phase StagePhase `json:"phase"`
	// StartTime is when the stage started updating clusters.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// HealthySince is when every cluster of the stage (but maxFailures)
	// became healthy; the soak ends soakTime later.
	// +optional
	HealthySince *metav1.Time `json:"healthySince,omitempty"`
	// SoakEnd is when the stage's soak ends.
	// +optional
	SoakEnd *metav1.Time `json:"soakEnd,omitempty"`
	// WaitingFor is the gate a Waiting or WaitingForApproval stage is at:
	// Before (the stage has not started) or After (it succeeded).
	// +optional
	WaitingFor GatePosition `json:"waitingFor,omitempty"`
	// WaitUntil is when the Wait gate the stage is at passes.
	// +optional
	WaitUntil *metav1.Time `json:"waitUntil,omitempty"`
	// CompletionTime is when the stage succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Clusters are the clusters of the placement in the stage, in the order
	// they are updated.
	// +optional
	// +listType=atomic
	Clusters []ClusterRolloutStatus `json:"clusters,omitempty"`
}

// ClusterHealth is how a cluster of a stage is doing with the revision.
type ClusterHealth string

// The health of a cluster in a rollout.
const (
	// ClusterPending: the cluster still runs an older revision.
	ClusterPending ClusterHealth = "Pending"
	// ClusterUpdating: the cluster has the revision, not yet healthy.
	ClusterUpdating  ClusterHealth = "Updating"
	ClusterHealthy   ClusterHealth = "Healthy"
	ClusterUnhealthy ClusterHealth = "Unhealthy"
)

// ClusterRolloutStatus is one cluster of a stage.
type ClusterRolloutStatus struct {
	// Name is the cluster's name.
	Name string `json:"name"`
	// Revision is the hash of the revision the cluster was told to run.
	// +optional
	Revision string `json:"revision,omitempty"`
	// Health is how the cluster does with the run's revision.
	Health ClusterHealth `json:"health"`
	// Reason says why a cluster is not healthy.
	// +optional
	Reason string `json:"reason,omitempty"`
	// UpdateTime is when the cluster was told to run the revision.
	// +optional
	UpdateTime *metav1.Time `json:"updateTime,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RolloutRunList is a list of RolloutRuns.
type RolloutRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the RolloutRuns.
	Items []RolloutRun `json:"items"`
}
