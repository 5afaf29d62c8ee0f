package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:path=remedies,scope="Cluster",categories={karmada-io}

// Remedy gives remedy actions to the clusters whose conditions match: they
// are listed in the clusters' status.remedyActions.
type Remedy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is which clusters, on which conditions, get which actions.
	Spec RemedySpec `json:"spec"`
}

// RemedySpec is which clusters, on which conditions, get which actions.
type RemedySpec struct {
	// ClusterAffinity is the clusters the Remedy watches; nil means all clusters.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`
	// DecisionMatches trigger the actions when any one matches; empty means always.
	// +optional
	DecisionMatches []DecisionMatch `json:"decisionMatches,omitempty"`
	// Actions are the actions to take; empty means none.
	// +optional
	Actions []RemedyAction `json:"actions,omitempty"`
}

// ClusterAffinity selects clusters by name.
type ClusterAffinity struct {
	// ClusterNames are the clusters; an affinity naming none selects no cluster.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// DecisionMatch is one trigger of a Remedy.
type DecisionMatch struct {
	// ClusterConditionMatch matches a condition of the cluster's status.
	// +optional
	ClusterConditionMatch *ClusterConditionRequirement `json:"clusterConditionMatch,omitempty"`
}

// ClusterConditionRequirement compares the status of one cluster condition.
type ClusterConditionRequirement struct {
	// ConditionType is the type of the cluster condition.
	ConditionType ConditionType `json:"conditionType"`
	// Operator is Equal or NotEqual.
	// +kubebuilder:validation:Enum=Equal;NotEqual
	Operator ClusterConditionOperator `json:"operator"`
	// ConditionStatus is the status to compare with, e.g. "False".
	ConditionStatus string `json:"conditionStatus"`
}

// ConditionType is the type of a cluster condition a Remedy watches.
type ConditionType string

const (
	// ServiceDomainNameResolutionReady reports whether Service DNS names resolve in the cluster.
	ServiceDomainNameResolutionReady ConditionType = "ServiceDomainNameResolutionReady"
)

// ClusterConditionOperator compares a condition's status.
type ClusterConditionOperator string

const (
	// ClusterConditionEqual matches when the status equals ConditionStatus.
	ClusterConditionEqual ClusterConditionOperator = "Equal"
	// ClusterConditionNotEqual matches when the status differs from ConditionStatus.
	ClusterConditionNotEqual ClusterConditionOperator = "NotEqual"
)

// RemedyAction is an action a Remedy gives to a cluster.
type RemedyAction string

const (
	// TrafficControl means traffic to the cluster should be blocked, e.g. by MultiClusterIngress.
	TrafficControl RemedyAction = "TrafficControl"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RemedyList is a list of Remedies.
type RemedyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Remedies.
	Items []Remedy `json:"items"`
}
