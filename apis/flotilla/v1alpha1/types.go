package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}

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
