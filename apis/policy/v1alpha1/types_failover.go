package v1alpha1

// FailoverBehavior is how applications move away from failures.
type FailoverBehavior struct {
	// Application is failover on application failure; requires PropagateDeps. nil disables it.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`
	// Cluster is failover on cluster failure; nil disables it.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior is how an application leaves a cluster where it is unhealthy.
type ApplicationFailoverBehavior struct {
	// DecisionConditions must all hold before the application fails over.
	DecisionConditions DecisionConditions `json:"decisionConditions"`
	// PurgeMode is how the application is removed from the cluster it leaves. Defaults to Gracefully.
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// GracePeriodSeconds is the longest wait before the old application is removed; only with Gracefully.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`
	// StatePreservation carries state of the old application to the new one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// ClusterFailoverBehavior is how applications leave a failed cluster.
type ClusterFailoverBehavior struct {
	// PurgeMode is Directly or Gracefully. Defaults to Gracefully.
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`
	// StatePreservation carries state of the old application to the new one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions are the conditions of an application failover.
type DecisionConditions struct {
	// TolerationSeconds is how long the application may be unhealthy before failing over. Defaults to 300.
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// PurgeMode is how an application is removed from the cluster it fails over from.
type PurgeMode string

// Purge modes.
const (
	// PurgeModeDirectly removes the old application at once.
	PurgeModeDirectly PurgeMode = "Directly"
	// PurgeModeGracefully removes the old application once the new one is healthy or the grace period ends.
	PurgeModeGracefully PurgeMode = "Gracefully"
	// PurgeModeNever leaves the old application for the user to remove.
	PurgeModeNever PurgeMode = "Never"
	// PurgeModeImmediately is the deprecated spelling of Directly, still accepted.
	PurgeModeImmediately PurgeMode = "Immediately"
	// PurgeModeGraciously is the deprecated spelling of Gracefully, still accepted.
	PurgeModeGraciously PurgeMode = "Graciously"
)

// StatePreservation lists the state carried over on failover.
type StatePreservation struct {
	// Rules each extract one piece of state.
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule extracts one piece of state of the old application
// and hands it to the new one as a label.
type StatePreservationRule struct {
	// AliasLabelName is the label key the state is passed under; a valid label key.
	AliasLabelName string `json:"aliasLabelName"`
	// JSONPath selects the state in the resource's status, e.g. {.availableReplicas}.
	JSONPath string `json:"jsonPath"`
}
