package failover

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestDynamicallyDivided(t *testing.T) {
	t.Parallel()
	rs := func(typ policyv1alpha1.ReplicaSchedulingType, pref policyv1alpha1.ReplicaDivisionPreference, w *policyv1alpha1.ClusterPreferences) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
			ReplicaSchedulingType: typ, ReplicaDivisionPreference: pref, WeightPreference: w}}
	}
	divided, weighted := policyv1alpha1.ReplicaSchedulingTypeDivided, policyv1alpha1.ReplicaDivisionPreferenceWeighted
	dynamic := &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	static := &policyv1alpha1.ClusterPreferences{StaticWeightList: []policyv1alpha1.StaticClusterWeight{
		{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m1"}}, Weight: 1}}}
	for _, tc := range []struct {
		name string
		p    *policyv1alpha1.Placement
		want bool
	}{
		{"no placement", nil, false},
		{"no replica scheduling: duplicated", &policyv1alpha1.Placement{}, false},
		{"duplicated", rs(policyv1alpha1.ReplicaSchedulingTypeDuplicated, "", nil), false},
		{"divided, aggregated", rs(divided, policyv1alpha1.ReplicaDivisionPreferenceAggregated, nil), true},
		{"divided, dynamic weight", rs(divided, weighted, dynamic), true},
		{"divided, static weights", rs(divided, weighted, static), false},
		{"divided, weighted without preference: equal static weights", rs(divided, weighted, nil), false},
		{"divided, no preference (defaulted to Weighted), dynamic weight", rs(divided, "", dynamic), true},
		{"divided, no preference, no weights", rs(divided, "", nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := DynamicallyDivided(tc.p); got != tc.want {
				t.Errorf("DynamicallyDivided() = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestDeschedule(t *testing.T) {
	t.Parallel()
	targets := []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 4}, {Name: "m2", Replicas: 2}, {Name: "m3", Replicas: 0}}
	for _, tc := range []struct {
		name        string
		measured    map[string]Measurement
		want        []workv1alpha2.TargetCluster // nil: unchanged
		wantLowered []Descheduled
	}{
		{name: "nothing measured", measured: nil},
		{name: "no unschedulable replicas", measured: map[string]Measurement{"m1": {Ready: 2}, "m2": {Ready: 2}}},
		{
			name:        "lowered by the unschedulable replicas",
			measured:    map[string]Measurement{"m1": {Unschedulable: 2, Ready: 2}, "m2": {Ready: 2}},
			want:        []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 2}, {Name: "m2", Replicas: 2}, {Name: "m3", Replicas: 0}},
			wantLowered: []Descheduled{{Cluster: "m1", From: 4, To: 2}},
		},
		{
			name:        "some replicas neither Ready nor unschedulable yet (starting, or pending under the threshold) stay",
			measured:    map[string]Measurement{"m1": {Unschedulable: 1, Ready: 1}},
			want:        []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}, {Name: "m3", Replicas: 0}},
			wantLowered: []Descheduled{{Cluster: "m1", From: 4, To: 3}},
		},
		{
			name:        "never below the Ready replicas: more counted unschedulable than are missing (a rollout's old pods)",
			measured:    map[string]Measurement{"m1": {Unschedulable: 3, Ready: 3}},
			want:        []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}, {Name: "m3", Replicas: 0}},
			wantLowered: []Descheduled{{Cluster: "m1", From: 4, To: 3}},
		},
		{
			name:        "none Ready and all unschedulable: down to zero, the cluster stays listed",
			measured:    map[string]Measurement{"m2": {Unschedulable: 5}},
			want:        []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 4}, {Name: "m2", Replicas: 0}, {Name: "m3", Replicas: 0}},
			wantLowered: []Descheduled{{Cluster: "m2", From: 2, To: 0}},
		},
		{name: "as many Ready as assigned: nothing missing", measured: map[string]Measurement{"m1": {Unschedulable: 2, Ready: 4}}},
		{name: "more Ready than assigned (scaling down)", measured: map[string]Measurement{"m2": {Unschedulable: 1, Ready: 3}}},
		{name: "a cluster with no replicas", measured: map[string]Measurement{"m3": {Unschedulable: 2}}},
		{name: "a cluster not in the binding", measured: map[string]Measurement{"m9": {Unschedulable: 2}}},
		{
			name:        "several clusters in one decision",
			measured:    map[string]Measurement{"m1": {Unschedulable: 1, Ready: 3}, "m2": {Unschedulable: 2, Ready: 0}},
			want:        []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 0}, {Name: "m3", Replicas: 0}},
			wantLowered: []Descheduled{{Cluster: "m1", From: 4, To: 3}, {Cluster: "m2", From: 2, To: 0}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append([]workv1alpha2.TargetCluster(nil), targets...)
			got, lowered := Deschedule(in, tc.measured)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLowered, lowered); diff != "" {
				t.Errorf("lowered (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(targets, in); diff != "" {
				t.Errorf("the input changed (-was +now):\n%s", diff)
			}
		})
	}
}
