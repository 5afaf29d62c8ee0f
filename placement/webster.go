package placement

import (
	"cmp"
	"hash/fnv"
	"math/bits"
	"slices"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// party is a cluster taking part in a division: its weight (votes) and the
// replicas it holds before the division starts (seats).
type party struct {
	name  string
	votes int64
	seats int32
}

// webster hands out total seats one by one to the party with the largest
// votes/(2*seats+1) — Webster's (Sainte-Laguë) highest-averages method — on top
// of the seats each party already holds. Ties go to the party with fewer seats,
// then to the smaller name, or to the larger name when descending is set, as
// Karmada breaks ties. Parties without votes get nothing. The result holds
// every party's seats, initial ones included.
func webster(total int32, parties []party, descending bool) map[string]int32 {
	ps := slices.Clone(parties)
	out := make(map[string]int32, len(ps))
	for _, p := range ps {
		out[p.name] = p.seats
	}
	for ; total > 0; total-- {
		best := -1
		for i := range ps {
			if ps[i].votes <= 0 {
				continue
			}
			if best < 0 || before(ps[i], ps[best], descending) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		ps[best].seats++
		out[ps[best].name]++
	}
	return out
}

// before tells whether a gets the next seat rather than b.
func before(a, b party, descending bool) bool {
	// a.votes/(2a.seats+1) vs b.votes/(2b.seats+1), compared exactly.
	if c := cmpProducts(uint64(a.votes), uint64(2*int64(b.seats)+1), uint64(b.votes), uint64(2*int64(a.seats)+1)); c != 0 {
		return c > 0
	}
	if a.seats != b.seats {
		return a.seats < b.seats
	}
	if descending {
		return a.name > b.name
	}
	return a.name < b.name
}

// cmpProducts compares x1*y1 with x2*y2 without overflow.
func cmpProducts(x1, y1, x2, y2 uint64) int {
	h1, l1 := bits.Mul64(x1, y1)
	h2, l2 := bits.Mul64(x2, y2)
	if c := cmp.Compare(h1, h2); c != 0 {
		return c
	}
	return cmp.Compare(l1, l2)
}

// descendingTieBreak is Karmada's per-object tie-break direction: names
// descend when the FNV-1a 32-bit hash of the resource UID is odd.
func descendingTieBreak(uid string) bool {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return h.Sum32()%2 == 1
}

// DivideCompletions splits a divided Job's spec.completions over its
// scheduled clusters with Webster's method, weighted by the replicas
// (parallelism) each cluster was given. The binding controller writes the
// result into each cluster's Job.
func DivideCompletions(completions int32, clusters []workv1alpha2.TargetCluster, uid string) map[string]int32 {
	parties := make([]party, 0, len(clusters))
	for _, c := range clusters {
		parties = append(parties, party{name: c.Name, votes: int64(c.Replicas)})
	}
	return webster(completions, parties, descendingTieBreak(uid))
}
