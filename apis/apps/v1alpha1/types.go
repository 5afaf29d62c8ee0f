package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:path=workloadrebalancers,scope="Cluster"
// +kubebuilder:subresource:status

// WorkloadRebalancer asks for its workloads to be rescheduled from scratch:
// the controller sets spec.rescheduleTriggeredAt on each workload's binding.
type WorkloadRebalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the workloads to reschedule.
	Spec WorkloadRebalancerSpec `json:"spec"`
	// Status is the result for each workload.
	// +optional
	Status WorkloadRebalancerStatus `json:"status,omitempty"`
}

// WorkloadRebalancerSpec is the workloads to reschedule.
type WorkloadRebalancerSpec struct {
	// Workloads are the resource templates to reschedule; at least one.
	// +kubebuilder:validation:MinItems=1
	Workloads []ObjectReference `json:"workloads"`
	// TTLSecondsAfterFinished deletes the rebalancer that long after every workload finished; nil keeps it.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ObjectReference names a resource template.
type ObjectReference struct {
	// APIVersion is the group/version of the resource.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind of the resource.
	Kind string `json:"kind"`
	// Name is the name of the resource.
	Name string `json:"name"`
	// Namespace is the namespace of the resource; empty for cluster-scoped kinds.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// WorkloadRebalancerStatus is the observed state of a WorkloadRebalancer.
type WorkloadRebalancerStatus struct {
	// ObservedWorkloads is the result for each workload.
	// +optional
	ObservedWorkloads []ObservedWorkload `json:"observedWorkloads,omitempty"`
	// ObservedGeneration is the generation the controller last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// FinishTime is when every workload had a result.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// ObservedWorkload is the result of rescheduling one workload.
type ObservedWorkload struct {
	// Workload is the workload.
	Workload ObjectReference `json:"workload"`
	// Result is Successful or Failed; empty while pending.
	// +optional
	Result RebalanceResult `json:"result,omitempty"`
	// Reason says why the rescheduling failed.
	// +optional
	Reason RebalanceFailedReason `json:"reason,omitempty"`
}

// RebalanceResult is the result of rescheduling one workload.
type RebalanceResult string

const (
	// RebalanceFailed means the workload could not be rescheduled.
	RebalanceFailed RebalanceResult = "Failed"
	// RebalanceSuccessful means the workload's binding was marked for rescheduling.
	RebalanceSuccessful RebalanceResult = "Successful"
)

// RebalanceFailedReason says why rescheduling a workload failed.
type RebalanceFailedReason string

const (
	// RebalanceObjectNotFound means the workload has no binding.
	RebalanceObjectNotFound RebalanceFailedReason = "ReferencedBindingNotFound"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// WorkloadRebalancerList is a list of WorkloadRebalancers.
type WorkloadRebalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the WorkloadRebalancers.
	Items []WorkloadRebalancer `json:"items"`
}
