package v1alpha1

// Condition types of Works.
const (
	// WorkApplied says whether the manifests were applied to the member cluster.
	WorkApplied = "Applied"
	// WorkProgressing says whether the manifests are being applied.
	WorkProgressing = "Progressing"
	// WorkAvailable says whether every manifest exists in the member cluster.
	WorkAvailable = "Available"
	// WorkDegraded says whether the manifests have stayed away from their
	// desired state for a while.
	WorkDegraded = "Degraded"
	// WorkDispatching says whether the Work is being dispatched (False while
	// spec.suspendDispatching is true).
	WorkDispatching = "Dispatching"
	// WorkDrifted says whether a member object differs from what was
	// applied in the fields Flotilla owns (Flotilla's own condition; the
	// fields are in status.manifestStatuses[].drift). False with reason
	// DriftCorrected once Flotilla wrote the applied values back; its
	// lastTransitionTime is when the last drift was found.
	WorkDrifted = "Drifted"
)

// Reasons and messages of Work conditions.
const (
	// WorkAppliedSuccessfulReason is the Applied=True reason.
	WorkAppliedSuccessfulReason = "AppliedSuccessful"
	// WorkAppliedSuccessfulMessage is the Applied=True message.
	WorkAppliedSuccessfulMessage = "Manifest has been successfully applied"
	// WorkAppliedFailedReason is the Applied=False reason.
	WorkAppliedFailedReason = "AppliedFailed"
	// WorkDispatchingReason is the Dispatching=True reason.
	WorkDispatchingReason = "Dispatching"
	// WorkDispatchingMessage is the Dispatching=True message.
	WorkDispatchingMessage = "Work is being dispatched to member clusters."
	// WorkSuspendDispatchingReason is the Dispatching=False reason.
	WorkSuspendDispatchingReason = "SuspendDispatching"
	// WorkSuspendDispatchingMessage is the Dispatching=False message.
	WorkSuspendDispatchingMessage = "Work dispatching is in a suspended state."
	// WorkDriftCorrectedReason is the Drifted=False reason after Flotilla
	// wrote the applied values back over a drift.
	WorkDriftCorrectedReason = "DriftCorrected"
	// WorkDriftDetectedReason is the Drifted=True reason while a drift
	// is not written back: the apply mode leaves it (ReportOnly,
	// IfNotDrifted), or writing failed.
	WorkDriftDetectedReason = "DriftDetected"
	// WorkDriftResolvedReason is the Drifted=False reason once the member
	// objects hold what was applied again, in an apply mode that leaves
	// drifts open.
	WorkDriftResolvedReason = "DriftResolved"
	// WorkReportOnlyReason is the Applied=False reason when a member
	// object differs from its manifest and the apply mode ReportOnly
	// leaves it so.
	WorkReportOnlyReason = "ReportOnly"
	// WorkHeldBackByDriftReason is the Applied=False reason when the
	// apply mode IfNotDrifted holds a manifest back from a member object
	// that drifted.
	WorkHeldBackByDriftReason = "HeldBackByDrift"
)

// Labels of Works and of the manifests in them; the keys Works share with
// bindings (the permanent ids, the Work's namespace and name, the managed
// label and annotation lists, conflict resolution) are declared in
// apis/work/v1alpha2.
const (
	// ManagedByKarmadaLabel marks an object in a member cluster as applied by
	// the control plane; an existing member object without it is only
	// overwritten when the manifest asks for conflict resolution "overwrite".
	ManagedByKarmadaLabel = "karmada.io/managed"
	// ManagedByKarmadaLabelValue is the value of ManagedByKarmadaLabel.
	ManagedByKarmadaLabelValue = "true"
	// PropagationInstruction on a Work instructs the execution controller;
	// the only value is PropagationInstructionSuppressed.
	PropagationInstruction = "propagation.karmada.io/instruction"
	// PropagationInstructionSuppressed marks a Work that must not be applied
	// to its member cluster; its manifests are not labelled or annotated.
	PropagationInstructionSuppressed = "suppressed"
)

// ExecutionControllerFinalizer is set on Works so the applied resources are
// removed from the member cluster before the Work goes.
const ExecutionControllerFinalizer = "karmada.io/execution-controller"
