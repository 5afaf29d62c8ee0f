package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FederatedResourceQuota limits the resources a namespace may use across all
// member clusters, and assigns fixed shares of it to some clusters.
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the overall limit and the static per-cluster assignments.
	Spec FederatedResourceQuotaSpec `json:"spec"`
	// Status is the observed limits and usage.
	// +optional
	Status FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FederatedResourceQuotaList is a list of FederatedResourceQuotas.
type FederatedResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the FederatedResourceQuotas.
	Items []FederatedResourceQuota `json:"items"`
}

// FederatedResourceQuotaSpec is the desired state of a FederatedResourceQuota.
type FederatedResourceQuotaSpec struct {
	// Overall is the limit per resource across all clusters.
	Overall corev1.ResourceList `json:"overall"`
	// StaticAssignments are fixed shares of Overall propagated as ResourceQuotas to clusters.
	// +optional
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is the share of a quota assigned to one cluster.
type StaticClusterAssignment struct {
	// ClusterName is the member cluster.
	ClusterName string `json:"clusterName"`
	// Hard is the limit per resource in that cluster.
	Hard corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is the observed state of a FederatedResourceQuota.
type FederatedResourceQuotaStatus struct {
	// Overall is the enforced overall limit.
	// +optional
	Overall corev1.ResourceList `json:"overall,omitempty"`
	// OverallUsed is the usage summed over all clusters.
	// +optional
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`
	// AggregatedStatus are the limits and usage per cluster.
	// +optional
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is the quota status of one cluster.
type ClusterQuotaStatus struct {
	// ClusterName is the member cluster.
	ClusterName string `json:"clusterName"`
	// ResourceQuotaStatus is the hard limits and usage in that cluster.
	corev1.ResourceQuotaStatus `json:",inline"`
}
