package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=federatedhpas,scope=Namespaced,shortName=fhpa,categories={karmada-io}
// +kubebuilder:printcolumn:JSONPath=`.spec.scaleTargetRef.kind`,name=`REFERENCE-KIND`,type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.scaleTargetRef.name`,name=`REFERENCE-NAME`,type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.minReplicas`,name=`MINPODS`,type=integer
// +kubebuilder:printcolumn:JSONPath=`.spec.maxReplicas`,name=`MAXPODS`,type=integer
// +kubebuilder:printcolumn:JSONPath=`.status.currentReplicas`,name=`REPLICAS`,type=integer
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name=`AGE`,type=date

// FederatedHPA scales a workload on the metrics of its pods in every member
// cluster; the scheduler then spreads the new replica count.
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the target, the bounds, the metrics and the scaling behavior.
	Spec FederatedHPASpec `json:"spec"`
	// Status is the autoscaler's last observed state, as for a Kubernetes HPA.
	// +optional
	Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status"`
}

// FederatedHPASpec is the desired behavior of a FederatedHPA; its fields
// mean what they mean in an autoscaling/v2 HorizontalPodAutoscaler.
type FederatedHPASpec struct {
	// ScaleTargetRef is the workload to scale; it must implement the scale subresource.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`
	// MinReplicas is the lower bound of the replica count; defaults to 1.
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the upper bound of the replica count; not less than MinReplicas.
	MaxReplicas int32 `json:"maxReplicas"`
	// Metrics drive the replica count (the largest proposal wins); defaults to 80% average CPU utilization.
	// +optional
	// +listType=atomic
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`
	// Behavior shapes scaling up and down; unset fields take the Kubernetes HPA defaults.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// FederatedHPAList is a list of FederatedHPAs.
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the FederatedHPAs.
	Items []FederatedHPA `json:"items"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=cronfederatedhpas,scope=Namespaced,shortName=cronfhpa,categories={karmada-io}
// +kubebuilder:printcolumn:JSONPath=`.spec.scaleTargetRef.kind`,name=`REFERENCE-KIND`,type=string
// +kubebuilder:printcolumn:JSONPath=`.spec.scaleTargetRef.name`,name=`REFERENCE-NAME`,type=string
// +kubebuilder:printcolumn:JSONPath=`.metadata.creationTimestamp`,name=`AGE`,type=date

// CronFederatedHPA scales a workload (through its scale subresource), or
// sets the bounds of a FederatedHPA, on cron schedules.
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the target and the scheduled rules.
	Spec CronFederatedHPASpec `json:"spec"`
	// Status records the executions of each rule.
	// +optional
	Status CronFederatedHPAStatus `json:"status"`
}

// CronFederatedHPASpec is the target and the rules of a CronFederatedHPA.
type CronFederatedHPASpec struct {
	// ScaleTargetRef is the workload or FederatedHPA (autoscaling.karmada.io/v1alpha1) to scale.
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`
	// Rules are the schedules and what each one sets.
	Rules []CronFederatedHPARule `json:"rules"`
}

// CronFederatedHPARule is one schedule and the replicas or bounds it sets.
type CronFederatedHPARule struct {
	// Name identifies the rule and its execution history; 1 to 32 characters, unique in the list.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`
	// Schedule is a standard five-field cron expression, as for a CronJob.
	Schedule string `json:"schedule"`
	// TargetReplicas is the replica count to set; required unless the target is a FederatedHPA.
	// +optional
	TargetReplicas *int32 `json:"targetReplicas,omitempty"`
	// TargetMinReplicas is the minReplicas to set on a target FederatedHPA; nil leaves it.
	// +optional
	TargetMinReplicas *int32 `json:"targetMinReplicas,omitempty"`
	// TargetMaxReplicas is the maxReplicas to set on a target FederatedHPA; nil leaves it.
	// +optional
	TargetMaxReplicas *int32 `json:"targetMaxReplicas,omitempty"`
	// Suspend stops further executions of the rule; defaults to false.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// TimeZone is the IANA time zone of Schedule; nil means the controller's local time zone.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`
	// SuccessfulHistoryLimit is how many successful executions to keep, 1 to 32; defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`
	// FailedHistoryLimit is how many failed executions to keep, 0 to 32; defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`
}

// CronFederatedHPAStatus is the observed state of a CronFederatedHPA.
type CronFederatedHPAStatus struct {
	// ExecutionHistories are the executions of each rule.
	// +optional
	ExecutionHistories []ExecutionHistory `json:"executionHistories,omitempty"`
}

// ExecutionHistory records the executions of one rule.
type ExecutionHistory struct {
	// RuleName is the name of the rule.
	RuleName string `json:"ruleName"`
	// NextExecutionTime is when the rule runs next; nil while the rule is suspended.
	// +optional
	NextExecutionTime *metav1.Time `json:"nextExecutionTime,omitempty"`
	// SuccessfulExecutions are the latest successful executions.
	// +optional
	SuccessfulExecutions []SuccessfulExecution `json:"successfulExecutions,omitempty"`
	// FailedExecutions are the latest failed executions.
	// +optional
	FailedExecutions []FailedExecution `json:"failedExecutions,omitempty"`
}

// SuccessfulExecution records one successful execution of a rule.
type SuccessfulExecution struct {
	// ScheduleTime is when the schedule said the rule should run.
	ScheduleTime *metav1.Time `json:"scheduleTime"`
	// ExecutionTime is when the rule actually ran.
	ExecutionTime *metav1.Time `json:"executionTime"`
	// AppliedReplicas is the replica count set, when the rule has targetReplicas.
	// +optional
	AppliedReplicas *int32 `json:"appliedReplicas,omitempty"`
	// AppliedMaxReplicas is the maxReplicas set, when the rule has targetMaxReplicas.
	// +optional
	AppliedMaxReplicas *int32 `json:"appliedMaxReplicas,omitempty"`
	// AppliedMinReplicas is the minReplicas set, when the rule has targetMinReplicas.
	// +optional
	AppliedMinReplicas *int32 `json:"appliedMinReplicas,omitempty"`
}

// FailedExecution records one failed execution of a rule.
type FailedExecution struct {
	// ScheduleTime is when the schedule said the rule should run.
	ScheduleTime *metav1.Time `json:"scheduleTime"`
	// ExecutionTime is when the rule actually ran.
	ExecutionTime *metav1.Time `json:"executionTime"`
	// Message says why the execution failed.
	Message string `json:"message"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// CronFederatedHPAList is a list of CronFederatedHPAs.
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CronFederatedHPAs.
	Items []CronFederatedHPA `json:"items"`
}
