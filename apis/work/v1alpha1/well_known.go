package v1alpha1

import workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"

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
)

// Labels of Works and of the manifests in them. The keys shared with
// bindings are defined in v1alpha2 and repeated here for callers of this
// package.
const (
	// WorkPermanentIDLabel is the permanent id of a Work, a UUID set on
	// creation and copied onto each of its manifests.
	WorkPermanentIDLabel = workv1alpha2.WorkPermanentIDLabel
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

// Annotations of Works and of the manifests in them.
const (
	// WorkNamespaceAnnotation is the namespace of the Work a manifest belongs to.
	WorkNamespaceAnnotation = workv1alpha2.WorkNamespaceAnnotation
	// WorkNameAnnotation is the name of the Work a manifest belongs to.
	WorkNameAnnotation = workv1alpha2.WorkNameAnnotation
	// ManagedAnnotation lists the annotation keys of a manifest Karmada manages.
	ManagedAnnotation = workv1alpha2.ManagedAnnotation
	// ManagedLabels lists the label keys of a manifest Karmada manages.
	ManagedLabels = workv1alpha2.ManagedLabels
	// ResourceConflictResolutionAnnotation says how to resolve a conflict
	// with an existing member object: "overwrite" or "abort".
	ResourceConflictResolutionAnnotation = workv1alpha2.ResourceConflictResolutionAnnotation
)

// Finalizers and namespaces of Works.
const (
	// ExecutionControllerFinalizer is set on Works so the applied resources
	// are removed from the member cluster before the Work goes.
	ExecutionControllerFinalizer = "karmada.io/execution-controller"
	// ExecutionSpacePrefix prefixes the execution namespace of a member
	// cluster, karmada-es-<cluster>, which holds the cluster's Works.
	ExecutionSpacePrefix = "karmada-es-"
)
