package v1alpha1

// Kinds of this API.
const (
	RolloutStrategyKind  = "RolloutStrategy"
	RolloutRunKind       = "RolloutRun"
	ResourceRevisionKind = "ResourceRevision"
)

// RolloutStrategyAnnotation on a PropagationPolicy or ClusterPropagationPolicy
// names the RolloutStrategy its placement is rolled out with.
const RolloutStrategyAnnotation = "rollout.flotilla.io/strategy"

// RevisionsAnnotation on a (Cluster)ResourceBinding under a rollout strategy
// holds the revision each cluster of its placement runs, as
// "<cluster>=<hash>,..." in cluster order. The rollout controller writes it;
// the binding controller builds a cluster's Work from that revision. A
// cluster it does not name gets the revision of the entry RevisionsAnyCluster
// when there is one (a strategy holding new clusters in their stage), else
// the template as it is.
const RevisionsAnnotation = "rollout.flotilla.io/revisions"

// RevisionsAnyCluster is the entry of RevisionsAnnotation for the clusters
// it does not name.
const RevisionsAnyCluster = "*"

// RevisionAnnotation on a Work is the hash of the template revision it was
// built from (only under a rollout strategy).
const RevisionAnnotation = "rollout.flotilla.io/revision"

// BindingLabel on a ResourceRevision or RolloutRun is the name of the
// template's (Cluster)ResourceBinding.
const BindingLabel = "rollout.flotilla.io/binding"

// DefaultRevisionHistoryLimit is how many revisions of a template are kept
// besides those clusters run.
const DefaultRevisionHistoryLimit = 10

// ApplyModeAnnotation on a PropagationPolicy or ClusterPropagationPolicy
// says how the member objects of the templates it claims are written (an
// ApplyMode); ApplyCorrect when absent. The detector copies it to each
// binding, the binding controller to each Work, where the execution
// controller and flotilla-agent read it.
const ApplyModeAnnotation = "apply.flotilla.io/mode"

// ApplyMode is a value of ApplyModeAnnotation.
type ApplyMode string

// Apply modes.
const (
	// ApplyCorrect writes every change of the template and writes the
	// applied values back over a drift: Karmada's behaviour.
	ApplyCorrect ApplyMode = "Correct"
	// ApplyReportOnly creates a missing object and never writes an existing
	// one: where it differs from the manifest (a change in the member, or a
	// template change) the Work records the drift and says the manifest is
	// not applied.
	ApplyReportOnly ApplyMode = "ReportOnly"
	// ApplyIfNotDrifted is ApplyCorrect until the object drifts: the drift is
	// recorded and left as it is, and template changes stop reaching that
	// cluster until the drift is resolved (the drifted fields hold the
	// applied values again, or the object is deleted).
	ApplyIfNotDrifted ApplyMode = "IfNotDrifted"
	// ApplyCreateOnly creates a missing object and never updates one: the
	// member owns it once it exists, and nothing is reported as drift.
	ApplyCreateOnly ApplyMode = "CreateOnly"
	// ApplyServerSide is ApplyCorrect written by server-side apply with
	// ApplyFieldManager, forcing ownership of the manifest's fields.
	ApplyServerSide ApplyMode = "ServerSideApply"
)

// ApplyModes are the apply modes, ApplyCorrect first.
var ApplyModes = []ApplyMode{ApplyCorrect, ApplyReportOnly, ApplyIfNotDrifted, ApplyCreateOnly, ApplyServerSide}

// ApplyFieldManager is the field manager of server-side applies.
const ApplyFieldManager = "flotilla"

// TakeOverAnnotation on a PropagationPolicy or ClusterPropagationPolicy
// says when an object that already exists in a member, not created by the
// control plane, is taken over (a TakeOver). Absent, the binding's
// conflictResolution decides as in Karmada: Overwrite takes over always,
// Abort never. Copied like ApplyModeAnnotation.
const TakeOverAnnotation = "apply.flotilla.io/take-over"

// TakeOver is a value of TakeOverAnnotation.
type TakeOver string

// Take-over modes.
const (
	// TakeOverAlways takes the object over and writes the manifest over it
	// (conflictResolution Overwrite).
	TakeOverAlways TakeOver = "Always"
	// TakeOverIfNoDiff takes the object over, without a write, only when it
	// already holds the manifest in the fields Flotilla owns; otherwise the
	// Work says which fields differ.
	TakeOverIfNoDiff TakeOver = "IfNoDiff"
	// TakeOverNever never takes an existing object over (conflictResolution
	// Abort).
	TakeOverNever TakeOver = "Never"
)

// TakeOvers are the take-over modes.
var TakeOvers = []TakeOver{TakeOverAlways, TakeOverIfNoDiff, TakeOverNever}

// ApplyAnnotations are the annotations a policy gives its bindings and they
// give their Works: how the member objects are written.
var ApplyAnnotations = []string{ApplyModeAnnotation, TakeOverAnnotation}

// ApplyAnnotationsOf returns the ApplyAnnotations among annotations; nil
// when there are none.
func ApplyAnnotationsOf(annotations map[string]string) map[string]string {
	var out map[string]string
	for _, k := range ApplyAnnotations {
		if v, ok := annotations[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// UnhealthySinceAnnotation on a binding with an application failover
// records, per target cluster where its workload is Unhealthy, since when
// (a JSON object of cluster name to RFC 3339 time): the application
// failover controller counts the policy's toleration from it, so a new
// leader continues the count where the last one left it.
const UnhealthySinceAnnotation = "failover.flotilla.io/unhealthy-since"
