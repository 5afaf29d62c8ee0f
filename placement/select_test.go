package placement

import (
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestSelectClusters(t *testing.T) {
	t.Parallel()
	placement := func(rs *policyv1alpha1.ReplicaSchedulingStrategy, scs ...policyv1alpha1.SpreadConstraint) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ReplicaScheduling: rs, SpreadConstraints: scs}
	}
	// Candidates come ordered as scheduleWith orders them: score desc,
	// available desc, name.
	four := []candidate{cand("a", 10), cand("b", 8), cand("c", 5), cand("d", 1)}
	regions := []candidate{
		cand("a", 10, pt.WithRegion("r1")), cand("b", 8, pt.WithRegion("r1")),
		cand("c", 5, pt.WithRegion("r2")), cand("d", 1, pt.WithRegion("r3")),
	}
	tests := []struct {
		name        string
		cands       []candidate
		replicas    int32
		placement   *policyv1alpha1.Placement
		want        []string
		wantReason  string
		wantMessage string
	}{
		{name: "no constraints: every candidate", cands: four, replicas: 3, placement: placement(pt.DynamicRS()),
			want: []string{"a", "b", "c", "d"}},
		{name: "static weights ignore the constraints", cands: four, replicas: 3, placement: placement(pt.StaticRS(), pt.ByCluster(1, 1)),
			want: []string{"a", "b", "c", "d"}},
		{name: "static weights with a list ignore the constraints", cands: four, replicas: 3,
			placement: placement(pt.StaticRS(pt.Weight(1, pt.OnClusters("a"))), pt.ByCluster(1, 1)),
			want:      []string{"a", "b", "c", "d"}},
		{name: "cluster max groups take the first candidates", cands: four, replicas: 3, placement: placement(pt.DuplicatedRS(), pt.ByCluster(1, 2)),
			want: []string{"a", "b"}},
		{name: "no replica scheduling is duplicated", cands: four, replicas: 3, placement: placement(nil, pt.ByCluster(1, 3)),
			want: []string{"a", "b", "c"}},
		{name: "cluster max groups above the candidates", cands: four, replicas: 3, placement: placement(pt.DuplicatedRS(), pt.ByCluster(2, 10)),
			want: []string{"a", "b", "c", "d"}},
		{name: "no max groups means no maximum", cands: four, replicas: 3, placement: placement(pt.DuplicatedRS(), pt.ByCluster(1, 0)),
			want: []string{"a", "b", "c", "d"}},
		{name: "fewer candidates than min groups", cands: four, replicas: 3, placement: placement(pt.DuplicatedRS(), pt.ByCluster(5, 6)),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "the number of feasible clusters is less than spreadConstraint.MinGroups"},
		{name: "duplicated does not need capacity", cands: four, replicas: 100, placement: placement(pt.DuplicatedRS(), pt.ByCluster(1, 2)),
			want: []string{"a", "b"}},
		{name: "divided: the first clusters cover the replicas", cands: four, replicas: 18, placement: placement(pt.DynamicRS(), pt.ByCluster(1, 2)),
			want: []string{"a", "b"}},
		{
			// Locality puts a and b first (2+3 < 10): the worst of them, a,
			// is swapped for c (10).
			name:      "divided: a cluster with more capacity is swapped in",
			cands:     []candidate{held(cand("a", 2)), held(cand("b", 3)), cand("c", 10), cand("d", 1)},
			replicas:  10,
			placement: placement(pt.DynamicRS(), pt.ByCluster(1, 2)),
			want:      []string{"c", "b"},
		},
		{
			name:       "aggregated: no single cluster is big enough",
			cands:      []candidate{held(cand("a", 2)), cand("b", 3), cand("c", 1)},
			replicas:   5,
			placement:  placement(pt.AggregatedRS(), pt.ByCluster(1, 1)),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "no enough resource when selecting 1 clusters",
		},
		{name: "divided: not enough capacity in any choice", cands: four, replicas: 19, placement: placement(pt.DynamicRS(), pt.ByCluster(1, 2)),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "no enough resource when selecting 2 clusters"},
		{
			// r1 has 18, r2 5, r3 1: r1 and r2 are chosen; the best of each
			// (a, c) comes first, then b.
			name: "region groups then clusters", cands: regions, replicas: 3,
			placement: placement(pt.DuplicatedRS(), pt.ByRegion(2, 2), pt.ByCluster(2, 3)),
			want:      []string{"a", "c", "b"},
		},
		{name: "region groups, one cluster per region", cands: regions, replicas: 3,
			placement: placement(pt.DuplicatedRS(), pt.ByRegion(2, 2), pt.ByCluster(2, 2)),
			want:      []string{"a", "c"}},
		// As Karmada: the fewest groups the constraints allow (its
		// selectGroups keeps the shortest feasible prefix of the best path).
		{name: "region groups without cluster constraint: the fewest regions", cands: regions, replicas: 3,
			placement: placement(pt.DuplicatedRS(), pt.ByRegion(1, 3)),
			want:      []string{"a", "b"}},
		{name: "the cluster minimum adds regions", cands: regions, replicas: 3,
			placement: placement(pt.DuplicatedRS(), pt.ByRegion(1, 3), pt.ByCluster(3, 3)),
			want:      []string{"a", "c", "b"}},
		{name: "the cluster minimum out of the regions' reach", cands: regions, replicas: 3,
			placement:  placement(pt.DuplicatedRS(), pt.ByRegion(1, 1), pt.ByCluster(3, 3)),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "the number of clusters is less than the cluster spreadConstraint.MinGroups"},
		{name: "divided: the first of each region stays, the added give way", cands: regions, replicas: 20,
			placement: placement(pt.DynamicRS(), pt.ByRegion(2, 2), pt.ByCluster(1, 3)),
			want:      []string{"a", "c", "b"}},
		{name: "divided: one per region cannot be swapped for capacity", cands: regions, replicas: 18,
			placement:  placement(pt.DynamicRS(), pt.ByRegion(2, 2), pt.ByCluster(1, 2)),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "no enough resource when selecting 2 clusters"},
		{name: "fewer regions than min groups", cands: regions, replicas: 3,
			placement:  placement(pt.DuplicatedRS(), pt.ByRegion(4, 4)),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "the number of feasible region is less than spreadConstraint.MinGroups"},
		// A region spread outranks a smaller cluster
		// count: one cluster per region, three in all.
		{name: "more regions than the cluster maximum", cands: regions, replicas: 3,
			placement: placement(pt.DuplicatedRS(), pt.ByRegion(3, 3), pt.ByCluster(1, 2)),
			want:      []string{"a", "c", "d"}},
		{
			// Locality outranks capacity when ordering regions: r3 holds d.
			name:      "regions ordered by score first",
			cands:     []candidate{held(cand("d", 1, pt.WithRegion("r3"))), regions[0], regions[1], regions[2]},
			replicas:  3,
			placement: placement(pt.DuplicatedRS(), pt.ByRegion(1, 1)),
			want:      []string{"d"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := selectClusters(tc.cands, pt.BindingSpec(tc.replicas, tc.placement))
			if !checkErr(t, err, tc.wantReason, tc.wantMessage) {
				return
			}
			var gotNames []string
			for _, c := range got {
				gotNames = append(gotNames, c.cluster.Name)
			}
			if diff := cmp.Diff(tc.want, gotNames); diff != "" {
				t.Errorf("selected (-want +got):\n%s", diff)
			}
		})
	}
}
