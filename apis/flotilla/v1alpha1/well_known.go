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
