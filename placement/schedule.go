package placement

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// decision is the result of scheduling one binding.
type decision struct {
	clusters []workv1alpha2.TargetCluster
	// affinityName is the clusterAffinities term used, when there are terms.
	affinityName string
	// considered says, per cluster, why it was refused or how many
	// replicas it could take, for the log.
	considered map[string]string
}

// Error is a failed decision with the Scheduled condition's reason
// (workv1alpha2.BindingReasonUnschedulable or BindingReasonNoClusterFit)
// and message.
type Error struct {
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

func unschedulable(format string, args ...any) error {
	return &Error{Reason: workv1alpha2.BindingReasonUnschedulable, Message: fmt.Sprintf(format, args...)}
}

// input is what one decision is made from.
type input struct {
	spec   *workv1alpha2.ResourceBindingSpec
	status *workv1alpha2.ResourceBindingStatus
	// clusters are all clusters, sorted by name.
	clusters []*clusterv1alpha1.Cluster
	// fresh redistributes every replica instead of keeping the current
	// assignment (a reschedule was triggered after the last scheduling).
	fresh bool
	// descending is the object's Webster tie-break direction.
	descending bool
	// groups are the clusters of the binding's workload affinity peers.
	groups peerClusters
	// estimate is the accurate estimator, nil when there is none.
	estimate Estimator
	// estimateSets is the accurate estimator of component sets, nil when
	// there is none.
	estimateSets SetEstimator
	// step is told how long each step took; nil: nobody asks.
	step func(step string, took time.Duration)
}

// stopwatch returns mark, which tells in.step that a step ended and took
// the time since the previous mark (or the stopwatch's start).
func (in input) stopwatch() (mark func(step string)) {
	if in.step == nil {
		return func(string) {}
	}
	last := time.Now()
	return func(step string) {
		now := time.Now()
		in.step(step, now.Sub(last))
		last = now
	}
}

// peerClusters are where the other members of a binding's workload affinity
// groups run (namespace-scoped, as in Karmada).
type peerClusters struct {
	// affinity, when not nil, are the clusters the affinity group already
	// runs on: the binding must go to one of them. The first member of a
	// group is not held back (nil).
	affinity map[string]bool
	// antiAffinity are the clusters the anti-affinity group runs on: the
	// binding must stay off them.
	antiAffinity map[string]bool
}

// schedule places a binding. With clusterAffinities the terms are tried in
// order from the one in use (the first after a triggered reschedule); the first
// that schedules wins. When none does the first error is returned and the
// caller keeps the current result.
func schedule(in input) (decision, error) {
	p := in.spec.Placement
	if len(p.ClusterAffinities) == 0 {
		clusters, considered, err := scheduleWith(in, p.ClusterAffinity, nil)
		return decision{clusters: clusters, considered: considered}, err
	}
	start := 0
	if !in.fresh {
		if i := slices.IndexFunc(p.ClusterAffinities, func(t policyv1alpha1.ClusterAffinityTerm) bool {
			return t.AffinityName == in.status.SchedulerObservedAffinityName
		}); i >= 0 {
			start = i
		}
	}
	var first error
	var firstConsidered map[string]string
	for _, term := range p.ClusterAffinities[start:] {
		clusters, considered, err := scheduleWith(in, &term.ClusterAffinity, term.OverflowAffinities)
		if err == nil {
			return decision{clusters: clusters, affinityName: term.AffinityName, considered: considered}, nil
		}
		if first == nil {
			first, firstConsidered = err, considered
		}
	}
	return decision{considered: firstConsidered}, first
}

// candidate is a feasible cluster with its score and available replicas.
type candidate struct {
	cluster   *clusterv1alpha1.Cluster
	score     int
	available int64
	// tier is 0 for the affinity's own clusters, k for those of its k-th
	// overflow affinity.
	tier int
}

// scheduleWith places the binding on clusters matching affinity: filter,
// score, select, assign replicas.
func scheduleWith(in input, affinity *policyv1alpha1.ClusterAffinity, overflow []policyv1alpha1.OverflowClusterAffinity) ([]workv1alpha2.TargetCluster, map[string]string, error) {
	mark := in.stopwatch()
	feasible, refused := filter(in.clusters, in.spec, affinity, in.groups)
	tiers := map[string]int{}
	if divided(in.spec.Placement) && !staticWeighted(in.spec.Placement) {
		// Overflow affinities add clusters for what the affinity's own
		// cannot run, tier by tier (dynamic division only, as validated).
		for k := range overflow {
			more, _ := filter(in.clusters, in.spec, &overflow[k].ClusterAffinity, in.groups)
			for _, c := range more {
				if _, seen := tiers[c.Name]; !seen && !slices.Contains(feasible, c) {
					tiers[c.Name] = k + 1
					feasible = append(feasible, c)
					delete(refused, c.Name)
				}
			}
		}
	}
	mark(StepFilter)
	if len(feasible) == 0 {
		return nil, refused, &Error{Reason: workv1alpha2.BindingReasonNoClusterFit, Message: fitError(len(in.clusters), refused)}
	}
	var avail map[string]int64
	if hasComponents(in.spec) {
		avail = availableSets(feasible, in)
		var err error
		if feasible, err = hostingSets(feasible, avail, refused, len(in.clusters)); err != nil {
			return nil, refused, err
		}
		for name, n := range avail {
			refused[name] = setsMessage(n)
		}
	} else {
		avail = availableReplicas(feasible, in.spec, in.estimate)
		for name, n := range avail {
			refused[name] = fmt.Sprintf("available %d", n)
		}
	}
	held := assigned(in.spec.Clusters)
	cands := make([]candidate, 0, len(feasible))
	for _, c := range feasible {
		score := 0
		if _, ok := held[c.Name]; ok {
			score = 100 // ClusterLocality: stay where the binding already runs
		}
		cands = append(cands, candidate{cluster: c, score: score, available: avail[c.Name], tier: tiers[c.Name]})
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if c := cmp.Compare(a.tier, b.tier); c != 0 {
			return c
		}
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.available, a.available); c != 0 {
			return c
		}
		return cmp.Compare(a.cluster.Name, b.cluster.Name)
	})
	mark(StepScore)
	selected, err := selectClusters(cands, in.spec)
	mark(StepSelect)
	if err != nil {
		return nil, refused, err
	}
	clusters, err := assignReplicas(selected, in)
	mark(StepAssignReplicas)
	return clusters, refused, err
}

// divided tells whether the placement divides replicas (rather than
// duplicating them).
func divided(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}

// staticWeighted tells whether a divided placement uses static weights.
func staticWeighted(p *policyv1alpha1.Placement) bool {
	if !divided(p) {
		return false
	}
	rs := p.ReplicaScheduling
	if rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		return false
	}
	return rs.WeightPreference == nil || rs.WeightPreference.DynamicWeight == ""
}
