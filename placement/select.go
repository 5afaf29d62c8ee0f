package placement

import (
	"cmp"
	"slices"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// selectClusters picks the clusters a binding goes to among the ordered
// candidates, under the placement's spread constraints (Karmada's
// SelectBestClusters): every candidate without constraints or with static
// weights; otherwise the best groups (region, zone, provider or label)
// within their min/max, and the best clusters within the cluster min/max.
// A divided binding needs clusters whose available replicas cover its
// replicas: better clusters are swapped in until they do.
func selectClusters(cands []candidate, spec *workv1alpha2.ResourceBindingSpec) ([]candidate, error) {
	p := spec.Placement
	if len(p.SpreadConstraints) == 0 || staticWeighted(p) {
		return cands, nil
	}
	var byCluster, byGroup *policyv1alpha1.SpreadConstraint
	for i := range p.SpreadConstraints {
		sc := &p.SpreadConstraints[i]
		if sc.SpreadByLabel == "" && (sc.SpreadByField == policyv1alpha1.SpreadByFieldCluster || sc.SpreadByField == "") {
			byCluster = sc
		} else if byGroup == nil {
			byGroup = sc
		}
	}
	need := int64(0)
	if divided(p) && !hasComponents(spec) {
		need = int64(spec.Replicas)
	}
	if byGroup != nil {
		return selectByGroup(cands, byGroup, byCluster, need)
	}
	return selectByCluster(cands, byCluster, need)
}

// selectByCluster takes the first clusters of pool within the cluster
// constraint's bounds (all of pool without one), then swaps in clusters of
// pool with more available replicas until need is covered.
func selectByCluster(pool []candidate, sc *policyv1alpha1.SpreadConstraint, need int64) ([]candidate, error) {
	lo, hi := 0, len(pool)
	if sc != nil {
		lo = sc.MinGroups
		if sc.MaxGroups > 0 {
			hi = min(hi, sc.MaxGroups)
		}
	}
	if len(pool) < lo {
		return nil, unschedulable("the number of feasible clusters is less than spreadConstraint.MinGroups")
	}
	selected := slices.Clone(pool[:hi])
	rest := slices.Clone(pool[hi:])
	slices.SortStableFunc(rest, func(a, b candidate) int { return cmp.Compare(b.available, a.available) })
	for sum(selected) < need {
		if len(rest) == 0 {
			return nil, unschedulable("no enough resource when selecting %d clusters", len(selected))
		}
		worst := 0
		for i := range selected {
			if selected[i].available < selected[worst].available {
				worst = i
			}
		}
		if len(selected) == 0 || rest[0].available <= selected[worst].available {
			return nil, unschedulable("no enough resource when selecting %d clusters", len(selected))
		}
		selected[worst], rest = rest[0], rest[1:]
	}
	return selected, nil
}

// selectByGroup picks groups as Karmada's region spread does: the fewest
// of the best groups (most available replicas first) that meet the group
// constraint's minimum and hold at least the cluster constraint's minimum
// of clusters, never more than its maximum. Then clusters: the best of
// each chosen group, even beyond the cluster constraint's maximum (a
// region spread outranks a smaller cluster count); then the others of the
// chosen groups, best available replicas first, up to that maximum. A
// divided binding swaps better clusters of the chosen groups for the
// added ones until its replicas are covered.
func selectByGroup(cands []candidate, group, byCluster *policyv1alpha1.SpreadConstraint, need int64) ([]candidate, error) {
	type grp struct {
		name      string
		members   []candidate
		available int64
		score     int
	}
	index := map[string]int{}
	var groups []*grp
	for _, c := range cands {
		g := groupOf(c.cluster, *group)
		i, ok := index[g]
		if !ok {
			i = len(groups)
			index[g] = i
			groups = append(groups, &grp{name: g})
		}
		groups[i].members = append(groups[i].members, c)
		groups[i].available += c.available
		groups[i].score = max(groups[i].score, c.score)
	}
	if len(groups) < group.MinGroups {
		return nil, unschedulable("the number of feasible %s is less than spreadConstraint.MinGroups", groupWord(group))
	}
	slices.SortStableFunc(groups, func(a, b *grp) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(b.available, a.available); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	most := len(groups)
	if group.MaxGroups > 0 {
		most = min(most, group.MaxGroups)
	}
	minClusters, maxClusters := 0, 0
	if byCluster != nil {
		minClusters, maxClusters = byCluster.MinGroups, byCluster.MaxGroups
	}
	n, clusters := 0, 0
	for n < most && (n < max(group.MinGroups, 1) || clusters < minClusters) {
		clusters += len(groups[n].members)
		n++
	}
	if clusters < minClusters {
		return nil, unschedulable("the number of clusters is less than the cluster spreadConstraint.MinGroups")
	}
	// The best cluster of every chosen group, then the others.
	var selected, others []candidate
	for _, g := range groups[:n] {
		selected = append(selected, g.members[0])
		others = append(others, g.members[1:]...)
	}
	slices.SortStableFunc(others, func(a, b candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(b.available, a.available)
	})
	more := len(others)
	if maxClusters > 0 {
		more = max(min(more, maxClusters-len(selected)), 0)
	}
	firsts := len(selected)
	selected = append(selected, others[:more]...)
	rest := slices.Clone(others[more:])
	slices.SortStableFunc(rest, func(a, b candidate) int { return cmp.Compare(b.available, a.available) })
	for sum(selected) < need {
		// Only the added clusters give way: one per group stays.
		worst := -1
		for i := firsts; i < len(selected); i++ {
			if worst < 0 || selected[i].available < selected[worst].available {
				worst = i
			}
		}
		if len(rest) == 0 || worst < 0 || rest[0].available <= selected[worst].available {
			return nil, unschedulable("no enough resource when selecting %d clusters", len(selected))
		}
		selected[worst], rest = rest[0], rest[1:]
	}
	return selected, nil
}

func groupWord(sc *policyv1alpha1.SpreadConstraint) string {
	if sc.SpreadByLabel != "" {
		return "label " + sc.SpreadByLabel
	}
	return string(sc.SpreadByField)
}

func sum(cs []candidate) int64 {
	var n int64
	for _, c := range cs {
		n += c.available
	}
	return n
}
