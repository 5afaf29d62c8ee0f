package placement

import (
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"hash/fnv"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestWebster(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		total      int32
		parties    []party
		descending bool
		want       map[string]int32
	}{
		{
			// Wikipedia's Sainte-Laguë example: 8 seats, 100000/80000/30000/20000.
			name:  "highest averages",
			total: 8,
			parties: []party{
				{name: "A", votes: 100000}, {name: "B", votes: 80000},
				{name: "C", votes: 30000}, {name: "D", votes: 20000},
			},
			want: map[string]int32{"A": 3, "B": 3, "C": 1, "D": 1},
		},
		{
			// 1: alpha 1200. 2: beta 900. 3: alpha 1200/3 = gamma 400/1,
			// gamma has fewer seats. 4: alpha 400 > beta 300 > gamma 133.
			name:    "three parties, four seats",
			total:   4,
			parties: []party{{name: "alpha", votes: 1200}, {name: "beta", votes: 900}, {name: "gamma", votes: 400}},
			want:    map[string]int32{"alpha": 2, "beta": 1, "gamma": 1},
		},
		{
			// old holds 1 seat: old 1/3 < new 1/1 → new; then old 1/3 = new
			// 1/3, same seats, "new" < "old" → new.
			name:    "initial seats are honoured and returned",
			total:   2,
			parties: []party{{name: "old", votes: 1, seats: 1}, {name: "new", votes: 1}},
			want:    map[string]int32{"old": 1, "new": 2},
		},
		{
			// a: 3/(2*1+1) = 1, b: 1/1 = 1: tie, b has fewer seats.
			name:    "tie goes to fewer seats",
			total:   1,
			parties: []party{{name: "a", votes: 3, seats: 1}, {name: "b", votes: 1}},
			want:    map[string]int32{"a": 1, "b": 1},
		},
		{
			name:    "tie goes to the smaller name",
			total:   1,
			parties: []party{{name: "b", votes: 1}, {name: "a", votes: 1}},
			want:    map[string]int32{"a": 1, "b": 0},
		},
		{
			name:       "tie goes to the larger name when descending",
			total:      1,
			parties:    []party{{name: "a", votes: 1}, {name: "b", votes: 1}},
			descending: true,
			want:       map[string]int32{"a": 0, "b": 1},
		},
		{
			// 1:1 over 5: a, b, a (tie at 1/3), b, a (tie at 1/5).
			name:    "odd total over equal votes, ascending",
			total:   5,
			parties: []party{{name: "a", votes: 1}, {name: "b", votes: 1}},
			want:    map[string]int32{"a": 3, "b": 2},
		},
		{
			name:       "odd total over equal votes, descending",
			total:      5,
			parties:    []party{{name: "a", votes: 1}, {name: "b", votes: 1}},
			descending: true,
			want:       map[string]int32{"a": 2, "b": 3},
		},
		{
			name:    "parties without votes get nothing",
			total:   3,
			parties: []party{{name: "a", votes: 0}, {name: "b", votes: 5}, {name: "c", votes: -1}},
			want:    map[string]int32{"a": 0, "b": 3, "c": 0},
		},
		{
			name:    "nobody has votes: only initial seats",
			total:   3,
			parties: []party{{name: "a", seats: 2}, {name: "b"}},
			want:    map[string]int32{"a": 2, "b": 0},
		},
		{
			name:    "no seats to hand out",
			total:   0,
			parties: []party{{name: "a", votes: 5, seats: 1}, {name: "b", votes: 7}},
			want:    map[string]int32{"a": 1, "b": 0},
		},
		{
			name:  "no parties",
			total: 3,
			want:  map[string]int32{},
		},
		{
			// MaxInt64 and MaxInt64-1 are the same float64: only exact
			// arithmetic gives b the first seat (b > a), then a (a/1 vs
			// b/3), then b again (b/3 > a/3 by one vote).
			name:    "int64 votes compared exactly",
			total:   3,
			parties: []party{{name: "a", votes: math.MaxInt64 - 1}, {name: "b", votes: math.MaxInt64}},
			want:    map[string]int32{"a": 1, "b": 2},
		},
		{
			// a: MaxInt32/(2*999+1) ≈ 1.07e6 always beats b: 1/1.
			name:    "MaxInt32 votes over many seats do not overflow",
			total:   1000,
			parties: []party{{name: "a", votes: math.MaxInt32}, {name: "b", votes: 1}},
			want:    map[string]int32{"a": 1000, "b": 0},
		},
		{
			// a, b, a (a/3 > b/3 by one vote), b (b/3 > a/5), a.
			name:    "near MaxInt32 votes",
			total:   5,
			parties: []party{{name: "a", votes: math.MaxInt32}, {name: "b", votes: math.MaxInt32 - 1}},
			want:    map[string]int32{"a": 3, "b": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := append([]party(nil), tc.parties...)
			got := webster(tc.total, tc.parties, tc.descending)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("webster (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.parties, cmp.AllowUnexported(party{})); diff != "" {
				t.Errorf("webster changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestDescendingTieBreak(t *testing.T) {
	t.Parallel()
	tests := []struct {
		uid string
		// sum is FNV-1a 32 of uid, computed outside Go (offset basis
		// 2166136261, prime 16777619).
		sum  uint32
		want bool
	}{
		{uid: "uid-0", sum: 1338267824, want: false},
		{uid: "uid-1", sum: 1355045443, want: true},
		{uid: "5f0c1c2e-0000-4000-8000-000000000001", sum: 1187009573, want: true},
		{uid: "5f0c1c2e-0000-4000-8000-000000000002", sum: 1136676716, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.uid, func(t *testing.T) {
			t.Parallel()
			h := fnv.New32a()
			_, _ = h.Write([]byte(tc.uid))
			if h.Sum32() != tc.sum {
				t.Fatalf("fixture: FNV-1a32(%q) = %d, table says %d", tc.uid, h.Sum32(), tc.sum)
			}
			if (tc.sum%2 == 1) != tc.want {
				t.Fatalf("fixture: parity of %d does not match want %v", tc.sum, tc.want)
			}
			if got := descendingTieBreak(tc.uid); got != tc.want {
				t.Errorf("descendingTieBreak(%q) = %v, want %v", tc.uid, got, tc.want)
			}
		})
	}
}

func TestDivideCompletions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		completions int32
		clusters    []workv1alpha2.TargetCluster
		uid         string
		want        map[string]int32
	}{
		{
			// Weights 2:1. Seat by seat (a's, b's average before the seat):
			// 1 a(2 vs 1), 2 b(.67 vs 1), 3 a(.67 vs .33), 4 a(.4 vs .33),
			// 5 b(.29 vs .33), 6 a(.29 vs .2), 7 a(.22 vs .2),
			// 8 b(.18 vs .2), 9 a(.18 vs .14), 10 a(.15 vs .14) → 7:3.
			name:        "completions follow the replicas",
			completions: 10,
			clusters:    []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)},
			uid:         "uid-0",
			want:        map[string]int32{"a": 7, "b": 3},
		},
		{
			name:        "ties go to the smaller name for an even uid hash",
			completions: 5,
			clusters:    []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)},
			uid:         "uid-0",
			want:        map[string]int32{"a": 3, "b": 2},
		},
		{
			name:        "ties go to the larger name for an odd uid hash",
			completions: 5,
			clusters:    []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)},
			uid:         "uid-1",
			want:        map[string]int32{"a": 2, "b": 3},
		},
		{
			name:        "a cluster without replicas gets no completions",
			completions: 4,
			clusters:    []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 0)},
			uid:         "uid-0",
			want:        map[string]int32{"a": 4, "b": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := DivideCompletions(tc.completions, tc.clusters, tc.uid)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DivideCompletions (-want +got):\n%s", diff)
			}
		})
	}
}
