// Package placement is the scheduling algorithm of Flotilla, as
// karmada-scheduler places bindings (docs/compatibility.md, Scheduling): it
// filters the clusters (API enablement, taints, cluster affinity or the ordered
// clusterAffinities with their overflow affinities, spread constraint fields,
// evictions, workload affinity groups), orders them (locality, available
// replicas, name), selects them under the spread constraints and divides the
// replicas (Duplicated, static weights, dynamic weights by available replicas,
// Aggregated; Webster's method with Karmada's deterministic tie-break). A
// workload described by components is placed as a whole instead (see
// components.go). It also divides a Job's completions the same way.
//
// It is pure: it reads what it is given and imports no client. The
// scheduler controller (controllers/scheduler) calls Schedule and writes
// the decision; the binding controller calls DivideCompletions.
package placement

import (
	"time"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Estimator tells how many more replicas with req a cluster can run by
// some other measure than its resource summary (Karmada's
// scheduler-estimator); ok is false when it does not know.
type Estimator func(cluster *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) (n int64, ok bool)

// Input is what one decision is made from.
type Input struct {
	Spec   *workv1alpha2.ResourceBindingSpec
	Status *workv1alpha2.ResourceBindingStatus
	// Clusters are all clusters, sorted by name.
	Clusters []*clusterv1alpha1.Cluster
	// Fresh redistributes every replica instead of keeping the current
	// assignment (a reschedule was triggered after the last scheduling).
	Fresh bool
	// Affinity, when not nil, are the clusters the binding's workload
	// affinity group already runs on: the binding must go to one of them.
	// The first member of a group is not held back (nil).
	Affinity map[string]bool
	// AntiAffinity are the clusters the anti-affinity group runs on.
	AntiAffinity map[string]bool
	// Estimate is the accurate estimator; nil: the summaries only.
	Estimate Estimator
	// EstimateSets is the accurate estimator of whole sets of components,
	// for bindings with spec.components; nil: the summaries, and Estimate
	// asked for each component alone (an upper bound, see setsByEstimator).
	EstimateSets SetEstimator
	// Step, when set, is told how long each step of the algorithm took
	// (StepFilter, StepScore, StepSelect, StepAssignReplicas), for the
	// scheduler's metrics.
	Step func(step string, took time.Duration)
}

// The steps of the algorithm, as Karmada's scheduler names them.
const (
	StepFilter         = "Filter"
	StepScore          = "Score"
	StepSelect         = "Select"
	StepAssignReplicas = "AssignReplicas"
)

// Decision is the result of scheduling one binding.
type Decision struct {
	Clusters []workv1alpha2.TargetCluster
	// AffinityName is the clusterAffinities term used, when there are terms.
	AffinityName string
	// Considered says, per cluster, why it was refused or how many
	// replicas it could take, for the log.
	Considered map[string]string
}

// Schedule places a binding. A failure is an *Error when the placement
// cannot be met; with clusterAffinities the caller keeps the current
// result then (see schedule).
func Schedule(in Input) (Decision, error) {
	dec, err := schedule(input{spec: in.Spec, status: in.Status, clusters: in.Clusters, fresh: in.Fresh,
		descending: descendingTieBreak(string(in.Spec.Resource.UID)),
		groups:     peerClusters{affinity: in.Affinity, antiAffinity: in.AntiAffinity}, estimate: in.Estimate, estimateSets: in.EstimateSets,
		step: in.Step})
	return Decision{Clusters: dec.clusters, AffinityName: dec.affinityName, Considered: dec.considered}, err
}
