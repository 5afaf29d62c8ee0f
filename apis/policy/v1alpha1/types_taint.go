package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterTaintPolicy adds taints to clusters, and removes them, when their
// conditions match. Deleting the policy leaves the taints in place.
type ClusterTaintPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is which clusters, when, and which taints.
	Spec ClusterTaintPolicySpec `json:"spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ClusterTaintPolicyList is a list of ClusterTaintPolicies.
type ClusterTaintPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ClusterTaintPolicies.
	Items []ClusterTaintPolicy `json:"items"`
}

// ClusterTaintPolicySpec is the desired behaviour of a ClusterTaintPolicy.
type ClusterTaintPolicySpec struct {
	// TargetClusters selects the clusters; nil selects all clusters.
	// +optional
	TargetClusters *ClusterAffinity `json:"targetClusters,omitempty"`
	// AddOnConditions must all match for the taints to be added; empty never adds.
	// +optional
	AddOnConditions []MatchCondition `json:"addOnConditions,omitempty"`
	// RemoveOnConditions must all match for the taints to be removed; empty never removes.
	// +optional
	RemoveOnConditions []MatchCondition `json:"removeOnConditions,omitempty"`
	// Taints are added or removed; at least one.
	Taints []Taint `json:"taints"`
}

// MatchCondition matches the status of one condition of a cluster.
type MatchCondition struct {
	// ConditionType is the cluster condition type, e.g. Ready.
	ConditionType string `json:"conditionType"`
	// Operator is In or NotIn.
	Operator MatchConditionOperator `json:"operator"`
	// StatusValues are the condition statuses the operator compares with.
	StatusValues []metav1.ConditionStatus `json:"statusValues"`
}

// MatchConditionOperator relates a condition status to a set of statuses.
type MatchConditionOperator string

// Match condition operators.
const (
	// MatchConditionOpIn matches when the status is one of the values.
	MatchConditionOpIn MatchConditionOperator = "In"
	// MatchConditionOpNotIn matches when the status is none of the values.
	MatchConditionOpNotIn MatchConditionOperator = "NotIn"
)

// Taint is a taint a ClusterTaintPolicy manages.
type Taint struct {
	// Key is the taint key.
	Key string `json:"key"`
	// Effect is NoSchedule, PreferNoExecute or NoExecute.
	Effect corev1.TaintEffect `json:"effect"`
	// Value is the taint value.
	// +optional
	Value string `json:"value,omitempty"`
}

// TaintEffectPreferNoExecute keeps new workloads off a cluster and lets
// cluster failover policies migrate the existing ones, regardless of
// tolerations.
const TaintEffectPreferNoExecute corev1.TaintEffect = "PreferNoExecute"
