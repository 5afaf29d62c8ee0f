package v1alpha2

// Condition types of ResourceBindings and ClusterResourceBindings.
const (
	// Scheduled says whether the scheduler has placed the binding on clusters.
	Scheduled = "Scheduled"
	// FullyApplied says whether the resource has been applied to every
	// cluster the binding is scheduled to.
	FullyApplied = "FullyApplied"
	// EvictionPaused (Flotilla's; Karmada has none) is True while the
	// taint manager holds back an eviction of the binding because too many
	// clusters are not Ready at once (a partition of the control plane
	// looks like every member failing); False once evictions resume.
	EvictionPaused = "EvictionPaused"
)

// Reasons of the EvictionPaused condition.
const (
	// EvictionPausedReasonClustersNotReady: more than the
	// --unhealthy-cluster-threshold share of clusters are not Ready.
	EvictionPausedReasonClustersNotReady = "ClustersNotReady"
	// EvictionPausedReasonResumed: evictions are no longer paused.
	EvictionPausedReasonResumed = "EvictionResumed"
)

// Reasons of the Scheduled condition.
const (
	// BindingReasonSuccess: the binding was scheduled.
	BindingReasonSuccess = "Success"
	// BindingReasonSchedulerError: scheduling failed on an internal error,
	// e.g. the API server could not be reached.
	BindingReasonSchedulerError = "SchedulerError"
	// BindingReasonNoClusterFit: no cluster passed the filters.
	BindingReasonNoClusterFit = "NoClusterFit"
	// BindingReasonUnschedulable: the binding cannot be scheduled right now,
	// e.g. the clusters lack capacity.
	BindingReasonUnschedulable = "Unschedulable"
	// BindingReasonQuotaExceeded: scheduling would exceed a FederatedResourceQuota.
	BindingReasonQuotaExceeded = "QuotaExceeded"
)

// ResourceBindingWebhookName is the name of Karmada's validating webhook of
// ResourceBindings, which enforces FederatedResourceQuota overall limits:
// its denials read `admission webhook "resourcebinding.karmada.io" denied
// the request: ...`, and Flotilla's refusals (made in its registry) read
// the same.
const ResourceBindingWebhookName = "resourcebinding.karmada.io"

// Reasons of the FullyApplied condition.
const (
	// FullyAppliedSuccessReason: the resource is applied to every scheduled cluster.
	FullyAppliedSuccessReason = "FullyAppliedSuccess"
	// FullyAppliedFailedReason: the resource is not applied to every scheduled cluster.
	FullyAppliedFailedReason = "FullyAppliedFailed"
)

// Eviction reasons and producers of GracefulEvictionTasks.
const (
	// EvictionReasonTaintUntolerated: the cluster has a NoExecute taint the
	// placement does not tolerate (or no longer tolerates).
	EvictionReasonTaintUntolerated = "TaintUntolerated"
	// EvictionReasonApplicationFailure: the application failed in the cluster
	// for longer than the failover's tolerationSeconds.
	EvictionReasonApplicationFailure = "ApplicationFailure"
	// EvictionProducerTaintManager is the producer of taint-triggered evictions.
	EvictionProducerTaintManager = "TaintManager"
	// EvictionProducerApplicationFailover is the producer of evictions of
	// applications unhealthy longer than their failover tolerates.
	EvictionProducerApplicationFailover = "ResourceBindingApplicationFailoverController"
)

// Labels of bindings, Works and the manifests in Works.
const (
	// ResourceBindingPermanentIDLabel is the permanent id of a ResourceBinding,
	// a UUID set on creation. Unlike metadata.uid it survives a backup and
	// restore, so Works select their binding by it. It is also set on the
	// binding's Works and their manifests.
	ResourceBindingPermanentIDLabel = "resourcebinding.karmada.io/permanent-id"
	// ClusterResourceBindingPermanentIDLabel is the permanent id of a
	// ClusterResourceBinding; see ResourceBindingPermanentIDLabel.
	ClusterResourceBindingPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"
	// WorkPermanentIDLabel is the permanent id of a Work, a UUID set on
	// creation and copied onto each of its manifests.
	WorkPermanentIDLabel = "work.karmada.io/permanent-id"
	// BindingManagedByLabel names the controller that manages a binding it
	// created itself (rather than the detector).
	BindingManagedByLabel = "binding.karmada.io/managed-by"
	// ResourceTemplateClaimedByLabel on a resource template names the
	// system that owns it (a MultiClusterService, for its Service): the
	// detector leaves it to that system.
	ResourceTemplateClaimedByLabel = "resourcetemplate.karmada.io/claimed-by"
	// DependedByLabelKeyPrefix prefixes the label set on an attached
	// (dependency) binding for each binding that depends on it; the suffix is
	// a hash of the dependent's namespace and name.
	DependedByLabelKeyPrefix = "resourcebinding.karmada.io/depended-by-"
)

// Annotations of bindings, Works and the manifests in Works.
const (
	// ResourceBindingNamespaceAnnotationKey is the namespace of the
	// ResourceBinding a Work or manifest derives from.
	ResourceBindingNamespaceAnnotationKey = "resourcebinding.karmada.io/namespace"
	// ResourceBindingNameAnnotationKey is the name of the ResourceBinding a
	// Work or manifest derives from.
	ResourceBindingNameAnnotationKey = "resourcebinding.karmada.io/name"
	// ClusterResourceBindingAnnotationKey is the name of the
	// ClusterResourceBinding a Work or manifest derives from.
	ClusterResourceBindingAnnotationKey = "clusterresourcebinding.karmada.io/name"
	// WorkNamespaceAnnotation is the namespace of the Work a manifest belongs to.
	WorkNamespaceAnnotation = "work.karmada.io/namespace"
	// WorkNameAnnotation is the name of the Work a manifest belongs to.
	WorkNameAnnotation = "work.karmada.io/name"
	// ResourceTemplateUIDAnnotation is the uid of the template a manifest derives from.
	ResourceTemplateUIDAnnotation = "resourcetemplate.karmada.io/uid"
	// ResourceTemplateGenerationAnnotationKey is the metadata.generation of
	// the template a manifest derives from, so status aggregation can tell
	// whether the members run the latest template.
	ResourceTemplateGenerationAnnotationKey = "resourcetemplate.karmada.io/generation"
	// ManagedAnnotation lists, sorted and comma-separated, the annotation keys
	// of a manifest that Karmada manages (always including itself and
	// ManagedLabels), so keys deleted from the template are deleted from the
	// member object too.
	ManagedAnnotation = "resourcetemplate.karmada.io/managed-annotations"
	// ManagedLabels lists, sorted and comma-separated, the label keys of a
	// manifest that Karmada manages.
	ManagedLabels = "resourcetemplate.karmada.io/managed-labels"
	// ResourceConflictResolutionAnnotation, on a template, a Work or a
	// manifest, says what to do when the object already exists in the member
	// cluster without being managed by Karmada: "overwrite" takes it over,
	// "abort" (or no annotation) leaves it alone. Other values are ignored.
	ResourceConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"
	// ResourceConflictResolutionOverwrite is the "overwrite" value of
	// ResourceConflictResolutionAnnotation.
	ResourceConflictResolutionOverwrite = "overwrite"
	// ResourceConflictResolutionAbort is the "abort" value of
	// ResourceConflictResolutionAnnotation.
	ResourceConflictResolutionAbort = "abort"
	// AdoptedAnnotation (Flotilla's; Karmada has none) marks a member object
	// that existed before Flotilla applied a Work over it (conflict
	// resolution overwrite): when the Work goes, the object is released,
	// never deleted, as Flotilla did not create it. Value "true".
	AdoptedAnnotation = "work.flotilla.io/adopted"
	// AssignedReplicasAnnotation (Flotilla's; Karmada has none), on a Work
	// of a workload whose replicas are divided among clusters, is the
	// number of replicas its manifest was revised to: the binding's
	// assignment to the Work's cluster when the Work was built. While the
	// binding assigns another number, the Work is not yet current, and the
	// status aggregation reports its health Unknown: a graceful eviction
	// waits for the replicas moved to a cluster, not for those it had.
	AssignedReplicasAnnotation = "work.flotilla.io/assigned-replicas"
	// ObservedRescheduleTriggerAnnotation (Flotilla's; Karmada has none),
	// on a binding, is the spec.rescheduleTriggeredAt (RFC 3339) of the
	// last reschedule the scheduler ran for. Both that trigger and
	// status.lastScheduledTime are whole seconds: a trigger in the second
	// of the last run (a WorkloadRebalancer created just after its
	// workload was scheduled) cannot be told from an older one by the
	// times alone. Kept in the binding so a new leader knows it.
	ObservedRescheduleTriggerAnnotation = "work.flotilla.io/observed-reschedule-trigger"
	// BindingDependenciesAnnotationKey lists, as JSON, the dependencies of an
	// independent binding (those propagated because of propagateDeps).
	BindingDependenciesAnnotationKey = "resourcebinding.karmada.io/dependencies"
	// AppliedPlacementAnnotation is the JSON of the placement the scheduler
	// last scheduled the binding with.
	AppliedPlacementAnnotation = "policy.karmada.io/applied-placement"
)

// Finalizers of bindings.
const (
	// BindingControllerFinalizer is set on ResourceBindings so their Works are
	// cleaned up before they go.
	BindingControllerFinalizer = "karmada.io/binding-controller"
	// ClusterResourceBindingControllerFinalizer is set on
	// ClusterResourceBindings so their Works are cleaned up before they go.
	ClusterResourceBindingControllerFinalizer = "karmada.io/cluster-resource-binding-controller"
	// BindingDependenciesDistributorFinalizer is set on bindings whose
	// dependencies are distributed, so the attached bindings are cleaned up.
	BindingDependenciesDistributorFinalizer = "karmada.io/binding-dependencies-distributor"
)

// SchedulingSubresource is the subresource of ResourceBindings and
// ClusterResourceBindings where a scheduler writes a decision in one
// request: spec.clusters, the applied-placement annotation and the status,
// as pods/binding lets kube-scheduler set a pod's node and condition
// together. It is Flotilla's own: every other field is kept as stored,
// and a Karmada client writing the binding and its status subresource
// sees them behave as in Karmada.
const SchedulingSubresource = "scheduling"
