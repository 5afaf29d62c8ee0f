package placement

import (
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestAssignReplicas(t *testing.T) {
	t.Parallel()
	two := []candidate{cand("a", 10), cand("b", 8)}
	labelled := []candidate{
		cand("a", 10, pt.WithLabels("env", "prod", "tier", "x")),
		cand("b", 10, pt.WithLabels("env", "prod")),
		cand("c", 10),
	}
	prod := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	tierX := &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "x"}}}
	tests := []struct {
		name        string
		selected    []candidate
		replicas    int32
		rs          *policyv1alpha1.ReplicaSchedulingStrategy
		clusters    []workv1alpha2.TargetCluster // spec.clusters before
		fresh       bool
		descending  bool
		want        []workv1alpha2.TargetCluster
		wantReason  string
		wantMessage string
	}{
		{name: "no replicas: every cluster, sorted, without replicas", selected: []candidate{cand("b", 1), cand("a", 0)},
			replicas: 0, rs: pt.DynamicRS(), want: []workv1alpha2.TargetCluster{pt.At("a", 0), pt.At("b", 0)}},
		{name: "no replica scheduling duplicates", selected: two, replicas: 3, rs: nil,
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 3)}},
		{name: "duplicated", selected: []candidate{cand("b", 0), cand("a", 0)}, replicas: 3, rs: pt.DuplicatedRS(),
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 3)}},
		// Weighted division (samples/nginx-propagation.yaml): weights 1:1.
		{name: "static 1:1 of 2", selected: two, replicas: 2, rs: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")), pt.Weight(1, pt.OnClusters("b"))),
			want: []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)}},
		{name: "static 1:1 scaled to 4", selected: two, replicas: 4, rs: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")), pt.Weight(1, pt.OnClusters("b"))),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 1)},
			want:     []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{name: "static weights ignore capacity", selected: []candidate{cand("a", 0), cand("b", 0)}, replicas: 3,
			rs:   pt.StaticRS(pt.Weight(2, pt.OnClusters("a")), pt.Weight(1, pt.OnClusters("b"))),
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)}},
		{name: "static weight 0 drops the cluster", selected: two, replicas: 3, rs: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")), pt.Weight(0, pt.OnClusters("b"))),
			want: []workv1alpha2.TargetCluster{pt.At("a", 3)}},
		{name: "static: unlisted cluster is dropped", selected: two, replicas: 3, rs: pt.StaticRS(pt.Weight(2, pt.OnClusters("b"))),
			want: []workv1alpha2.TargetCluster{pt.At("b", 3)}},
		// a, b, a (tie at 1/3, smaller name).
		{name: "static: all weights 0 means equal weights", selected: two, replicas: 3, rs: pt.StaticRS(pt.Weight(0, pt.OnClusters("a", "b"))),
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)}},
		{name: "static: all weights 0, descending tie-break", selected: two, replicas: 3, rs: pt.StaticRS(pt.Weight(0, pt.OnClusters("a", "b"))),
			descending: true, want: []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("b", 2)}},
		{name: "static without weightPreference: equal", selected: two, replicas: 4, rs: pt.StaticRS(),
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{
			// Votes a 2, b 2, c 1: a, b, c (1 > 2/3), a, b.
			name: "static entries matched by label selector", selected: labelled, replicas: 5,
			rs:   pt.StaticRS(pt.Weight(2, prod), pt.Weight(1, pt.OnClusters("c"))),
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2), pt.At("c", 1)},
		},
		{
			// a matches weight 1 by name and 3 by label: 3. Votes a 3, b 1:
			// a, b (tie at 1, fewer seats), a, a.
			name: "static: the largest matching weight counts", selected: labelled[:2], replicas: 4,
			rs:   pt.StaticRS(pt.Weight(1, pt.OnClusters("a")), pt.Weight(3, tierX), pt.Weight(1, pt.OnClusters("b"))),
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 1)},
		},
		// Votes 10:8: a, b, a (3.3 > 2.7), b (2.7 > 2), a (2 > 1.6), b (1.6 > 1.4).
		{name: "dynamic by available replicas", selected: two, replicas: 6, rs: pt.DynamicRS(),
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 3)}},
		{name: "dynamic: a cluster without capacity gets nothing", selected: []candidate{cand("a", 0), cand("b", 5)}, replicas: 3, rs: pt.DynamicRS(),
			want: []workv1alpha2.TargetCluster{pt.At("b", 3)}},
		{name: "dynamic: result sorted by name", selected: []candidate{cand("c", 10), cand("a", 10)}, replicas: 2, rs: pt.DynamicRS(),
			want: []workv1alpha2.TargetCluster{pt.At("a", 1), pt.At("c", 1)}},
		// Delta 2 over the free room 7:5 (available 10 and 8 count the 3
		// held on each), from 3 seats each: a (7/7 > 5/7), a (7/9 > 5/7).
		{name: "dynamic steady scale-up keeps the existing replicas", selected: two, replicas: 8, rs: pt.DynamicRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 3)},
			want:     []workv1alpha2.TargetCluster{pt.At("a", 5), pt.At("b", 3)}},
		// A cluster whose room (quota) fits 2 more, holding
		// 3, does not take 2+3: only the 2 added replicas need room, and
		// the 3 it holds are not room.
		{name: "dynamic steady scale-up: the held replicas are no room", selected: []candidate{cand("a", 5)}, replicas: 5, rs: pt.DynamicRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 3)},
			want:     []workv1alpha2.TargetCluster{pt.At("a", 5)}},
		{name: "dynamic steady scale-up: more than the room is unschedulable", selected: []candidate{cand("a", 5)}, replicas: 6, rs: pt.DynamicRS(),
			clusters:   []workv1alpha2.TargetCluster{pt.At("a", 3)},
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "Clusters available replicas 2 are not enough to schedule."},
		// 3 over the current 4:2: a, b (2 > 4/3), a.
		{name: "dynamic steady scale-down is proportional", selected: two, replicas: 3, rs: pt.DynamicRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 4), pt.At("b", 2)},
			want:     []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)}},
		{name: "dynamic scale-down ignores clusters no longer selected", selected: two, replicas: 3, rs: pt.DynamicRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 4), pt.At("b", 2), pt.At("gone", 5)},
			want:     []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)}},
		{name: "dynamic: same replicas keep the assignment", selected: []candidate{cand("a", 1), cand("b", 100)}, replicas: 3, rs: pt.DynamicRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)},
			want:     []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 1)}},
		{name: "dynamic fresh redistributes everything", selected: []candidate{cand("a", 10), cand("b", 10)}, replicas: 4, rs: pt.DynamicRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("a", 4)}, fresh: true,
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{name: "dynamic: not enough capacity", selected: two, replicas: 20, rs: pt.DynamicRS(),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "Clusters available replicas 18 are not enough to schedule."},
		{name: "dynamic scale-up: not enough capacity for the delta", selected: two, replicas: 25, rs: pt.DynamicRS(),
			clusters:   []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 3)},
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "Clusters available replicas 12 are not enough to schedule."},
		{name: "aggregated: the fewest clusters", selected: []candidate{cand("a", 3), cand("b", 6), cand("c", 4)}, replicas: 5, rs: pt.AggregatedRS(),
			want: []workv1alpha2.TargetCluster{pt.At("b", 5)}},
		// b 6 + c 4 cover 8; over 6:4: b, c, b, c, b, b, c, b.
		{name: "aggregated: the largest clusters first", selected: []candidate{cand("a", 3), cand("b", 6), cand("c", 4)}, replicas: 8, rs: pt.AggregatedRS(),
			want: []workv1alpha2.TargetCluster{pt.At("b", 5), pt.At("c", 3)}},
		// c holds 2 and has room for 4 more: the 3 added fit there alone.
		{name: "aggregated: clusters in use first", selected: []candidate{cand("a", 3), cand("b", 6), cand("c", 6)}, replicas: 5, rs: pt.AggregatedRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("c", 2)},
			want:     []workv1alpha2.TargetCluster{pt.At("c", 5)}},
		// c holds 2 with room for 2 more: the 3 added take b too, which
		// has the most room (Webster over 2:6 from c's 2 seats).
		{name: "aggregated: a cluster in use without room for the delta", selected: []candidate{cand("a", 3), cand("b", 6), cand("c", 4)}, replicas: 5, rs: pt.AggregatedRS(),
			clusters: []workv1alpha2.TargetCluster{pt.At("c", 2)},
			want:     []workv1alpha2.TargetCluster{pt.At("b", 3), pt.At("c", 2)}},
		{name: "aggregated: not enough capacity", selected: []candidate{cand("a", 3), cand("b", 6)}, replicas: 10, rs: pt.AggregatedRS(),
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "Clusters available replicas 9 are not enough to schedule."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := pt.BindingSpec(tc.replicas, &policyv1alpha1.Placement{ReplicaScheduling: tc.rs}, tc.clusters...)
			got, err := assignReplicas(tc.selected, input{spec: spec, status: &workv1alpha2.ResourceBindingStatus{}, fresh: tc.fresh, descending: tc.descending})
			if !checkErr(t, err, tc.wantReason, tc.wantMessage) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("assignReplicas (-want +got):\n%s", diff)
			}
		})
	}
}

// The existing assignment counts as initial seats: Karmada's dynamic scale-up
// divides the delta with the scheduled replicas as initial Webster seats
// (AllocateWebsterSeats' initialAssignments). a holds 3, available a 12, b 10,
// one more replica: a's average is 12/(2*3+1) ≈ 1.7 against b's 10/1, so b gets
// it.
func TestAssignDynamicScaleUpHonoursInitialSeats(t *testing.T) {
	t.Parallel()
	spec := pt.BindingSpec(4, &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()}, pt.At("a", 3))
	got, err := assignReplicas([]candidate{held(cand("a", 12)), cand("b", 10)}, input{spec: spec, status: &workv1alpha2.ResourceBindingStatus{}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 1)}, got); diff != "" {
		t.Errorf("assignReplicas (-want +got):\n%s", diff)
	}
}

// Steady overflow: what the tiers hold stays; growth fills the first tier
// with room; shrinking retracts from the last tier first.
func TestAssignTiersSteady(t *testing.T) {
	t.Parallel()
	tiered := func(name string, available int64, tier int) candidate {
		c := cand(name, available)
		c.tier = tier
		return c
	}
	// available counts what the binding already holds there.
	a, b := tiered("a", 3, 0), tiered("b", 100, 1)
	for _, tc := range []struct {
		name     string
		replicas int32
		current  []workv1alpha2.TargetCluster
		fresh    bool
		want     []workv1alpha2.TargetCluster
	}{
		{name: "fits the first tier", replicas: 2, want: []workv1alpha2.TargetCluster{pt.At("a", 2)}},
		{name: "spills to the overflow", replicas: 5, current: []workv1alpha2.TargetCluster{pt.At("a", 2)},
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)}},
		{name: "unchanged count keeps the result", replicas: 5, current: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)},
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)}},
		{name: "growth beyond the first tier's room goes to the overflow", replicas: 7, current: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)},
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 4)}},
		{name: "shrinking retracts from the overflow first", replicas: 3, current: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)},
			want: []workv1alpha2.TargetCluster{pt.At("a", 3)}},
		{name: "and then from the first tier", replicas: 2, current: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)},
			want: []workv1alpha2.TargetCluster{pt.At("a", 2)}},
		{name: "fresh refills from nothing", replicas: 5, fresh: true, current: []workv1alpha2.TargetCluster{pt.At("b", 5)},
			want: []workv1alpha2.TargetCluster{pt.At("a", 3), pt.At("b", 2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := pt.BindingSpec(tc.replicas, &policyv1alpha1.Placement{ReplicaScheduling: pt.AggregatedRS()}, tc.current...)
			got, err := assignTiers([]candidate{a, b}, input{spec: spec, status: &workv1alpha2.ResourceBindingStatus{}, fresh: tc.fresh})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("assignTiers (-want +got):\n%s", diff)
			}
		})
	}
}
