package placement

import (
	"cmp"
	"slices"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/selectors"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// assignReplicas gives each selected cluster its replicas, as karmada-scheduler
// does: a binding without replicas goes to every cluster as is; Duplicated
// gives each the full count; Divided divides it with static weights, or
// dynamically by available replicas (Weighted+AvailableReplicas, Aggregated).
// The result is sorted by name, without empty clusters.
func assignReplicas(selected []candidate, in input) ([]workv1alpha2.TargetCluster, error) {
	spec, p := in.spec, in.spec.Placement
	if hasComponents(spec) {
		return assignSets(selected, spec), nil
	}
	if spec.Replicas == 0 || !divided(p) {
		out := make([]workv1alpha2.TargetCluster, 0, len(selected))
		for _, c := range selected {
			out = append(out, workv1alpha2.TargetCluster{Name: c.cluster.Name, Replicas: spec.Replicas})
		}
		return sorted(out), nil
	}
	if staticWeighted(p) {
		return sorted(fromSeats(webster(spec.Replicas, staticWeights(selected, p), in.descending))), nil
	}
	if slices.ContainsFunc(selected, func(c candidate) bool { return c.tier > 0 }) {
		return assignTiers(selected, in)
	}
	return assignDynamic(selected, in)
}

// assignTiers fills the overflow tiers in order, as Karmada does. In the steady
// mode what the tiers hold is kept: new replicas go to the first tier with room
// (its clusters' available replicas beyond what they hold), the last taking the
// rest or failing; fewer replicas are taken back from the last tiers first, so
// a workload that shrinks retracts from its overflow clusters. The fresh mode
// fills the tiers from nothing. Within a tier the replicas are divided
// dynamically.
func assignTiers(selected []candidate, in input) ([]workv1alpha2.TargetCluster, error) {
	selected = slices.Clone(selected)
	slices.SortStableFunc(selected, func(a, b candidate) int { return cmp.Compare(a.tier, b.tier) })
	held := map[string]int32{}
	if !in.fresh {
		held = assigned(in.spec.Clusters)
	}
	// tiers[i] is [start, end) of one tier in selected, with what it holds.
	type tier struct {
		start, end int
		held       int32
		spare      int64
	}
	var tiers []tier
	var total int32
	for start := 0; start < len(selected); {
		t := tier{start: start, end: start}
		for t.end < len(selected) && selected[t.end].tier == selected[start].tier {
			c := selected[t.end]
			t.held += held[c.cluster.Name]
			t.spare += max(c.available-int64(held[c.cluster.Name]), 0)
			t.end++
		}
		total += t.held
		tiers = append(tiers, t)
		start = t.end
	}
	want := make([]int32, len(tiers)) // each tier's replicas
	for i, t := range tiers {
		want[i] = t.held
	}
	switch target := in.spec.Replicas; {
	case target > total:
		remaining := int64(target - total)
		for i, t := range tiers {
			take := remaining
			if i < len(tiers)-1 {
				take = min(remaining, t.spare)
			}
			want[i] += int32(take)
			remaining -= take
		}
	case target < total:
		excess := total - target
		for i := len(tiers) - 1; i >= 0 && excess > 0; i-- {
			cut := min(excess, want[i])
			want[i] -= cut
			excess -= cut
		}
	}
	var out []workv1alpha2.TargetCluster
	for i, t := range tiers {
		if want[i] == 0 {
			continue
		}
		spec := *in.spec
		spec.Replicas = want[i]
		sub := in
		sub.spec = &spec
		part, err := assignDynamic(selected[t.start:t.end], sub)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return sorted(out), nil
}

// staticWeights are each cluster's weight: the largest weight of the
// static list entries matching it. Clusters weighing 0 are left out, and
// when all do (or there is no list) every cluster weighs 1.
func staticWeights(selected []candidate, p *policyv1alpha1.Placement) []party {
	var list []policyv1alpha1.StaticClusterWeight
	if wp := p.ReplicaScheduling.WeightPreference; wp != nil {
		list = wp.StaticWeightList
	}
	var parties []party
	for _, c := range selected {
		var w int64
		for _, e := range list {
			if e.Weight > w && selectors.ClusterMatches(c.cluster, &e.TargetCluster) {
				w = e.Weight
			}
		}
		if w > 0 {
			parties = append(parties, party{name: c.cluster.Name, votes: w})
		}
	}
	if len(parties) == 0 {
		for _, c := range selected {
			parties = append(parties, party{name: c.cluster.Name, votes: 1})
		}
	}
	return parties
}

// assignDynamic divides by available replicas. In the steady mode the
// current assignment is kept: a scale-down shrinks the clusters in use in
// proportion to what they hold, a scale-up divides only the new replicas,
// which must fit the clusters' free room (what they can run beyond what
// the binding holds there), or the binding is Unschedulable and keeps its
// clusters.
// The fresh mode divides everything again.
func assignDynamic(selected []candidate, in input) ([]workv1alpha2.TargetCluster, error) {
	spec := in.spec
	target := int64(spec.Replicas)
	inUse := map[string]int32{}
	var held int64
	if !in.fresh {
		chosen := map[string]bool{}
		for _, c := range selected {
			chosen[c.cluster.Name] = true
		}
		for _, t := range spec.Clusters {
			if chosen[t.Name] && t.Replicas > 0 {
				inUse[t.Name] = t.Replicas
				held += int64(t.Replicas)
			}
		}
	}
	switch {
	case held > target:
		parties := make([]party, 0, len(inUse))
		for name, n := range inUse {
			parties = append(parties, party{name: name, votes: int64(n)})
		}
		slices.SortFunc(parties, func(a, b party) int { return cmp.Compare(a.name, b.name) })
		return sorted(fromSeats(webster(spec.Replicas, parties, in.descending))), nil
	case held == target:
		out := make(map[string]int32, len(inUse))
		for k, v := range inUse {
			out[k] = v
		}
		return sorted(fromSeats(out)), nil
	}
	delta := target - held
	// Only the added replicas must fit, and only in what each cluster has
	// free: its available replicas count what the binding holds there
	// (availableReplicas), which are not free room for more (Karmada's
	// steady scale-up estimates the clusters without the binding's own
	// replicas). They go where the averages of that free room are highest,
	// counting what each cluster already holds (Webster's initial seats).
	parties := make([]party, 0, len(selected))
	for _, c := range selected {
		free := max(c.available-int64(inUse[c.cluster.Name]), 0)
		parties = append(parties, party{name: c.cluster.Name, votes: free, seats: inUse[c.cluster.Name]})
	}
	if p := spec.Placement.ReplicaScheduling; p.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceAggregated {
		parties = aggregate(parties, inUse, delta)
	}
	var capacity int64
	for _, p := range parties {
		capacity += p.votes
	}
	if capacity < delta {
		return nil, unschedulable("Clusters available replicas %d are not enough to schedule.", capacity)
	}
	seats := webster(int32(delta), parties, in.descending)
	for name, n := range inUse {
		if _, ok := seats[name]; !ok {
			seats[name] = n // left out of an Aggregated prefix: keeps what it has
		}
	}
	return sorted(fromSeats(seats)), nil
}

// aggregate keeps the fewest clusters whose available replicas cover need:
// clusters already in use first, then the largest.
func aggregate(parties []party, inUse map[string]int32, need int64) []party {
	ordered := slices.Clone(parties)
	slices.SortStableFunc(ordered, func(a, b party) int {
		_, ua := inUse[a.name]
		_, ub := inUse[b.name]
		if ua != ub {
			if ua {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.votes, a.votes); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	var got int64
	for i, p := range ordered {
		got += p.votes
		if got >= need {
			return ordered[:i+1]
		}
	}
	return ordered
}

func fromSeats(seats map[string]int32) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, 0, len(seats))
	for name, n := range seats {
		if n > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: name, Replicas: n})
		}
	}
	return out
}

func sorted(ts []workv1alpha2.TargetCluster) []workv1alpha2.TargetCluster {
	slices.SortFunc(ts, func(a, b workv1alpha2.TargetCluster) int { return cmp.Compare(a.Name, b.Name) })
	return ts
}
