package placement

import (
	"errors"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestSchedule(t *testing.T) {
	t.Parallel()
	// a has room for 10 pods, b for 5; c is tainted.
	clusters := []*clusterv1alpha1.Cluster{
		pt.Cluster("a", pt.WithPods("10")),
		pt.Cluster("b", pt.WithPods("5")),
		pt.Cluster("c", pt.WithPods("10"), pt.WithTaint("k", "", corev1.TaintEffectNoSchedule)),
	}
	term := func(name string, cs ...string) policyv1alpha1.ClusterAffinityTerm {
		return policyv1alpha1.ClusterAffinityTerm{AffinityName: name, ClusterAffinity: *pt.OnClusters(cs...)}
	}
	terms := func(ts ...policyv1alpha1.ClusterAffinityTerm) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ClusterAffinities: ts}
	}
	noFit := "0/3 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}, " +
		"2 cluster(s) did not match the placement cluster affinity constraint."
	tests := []struct {
		name         string
		replicas     int32
		placement    *policyv1alpha1.Placement
		scheduled    []workv1alpha2.TargetCluster
		observed     string // status.schedulerObservingAffinityName
		fresh        bool
		want         []workv1alpha2.TargetCluster
		wantAffinity string
		wantReason   string
		wantMessage  string
	}{
		{name: "every fitting cluster, duplicated", replicas: 2, placement: &policyv1alpha1.Placement{},
			want: []workv1alpha2.TargetCluster{pt.At("a", 2), pt.At("b", 2)}},
		{name: "cluster affinity", replicas: 2, placement: &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("b", "c")},
			want: []workv1alpha2.TargetCluster{pt.At("b", 2)}},
		{name: "no cluster fits", replicas: 2, placement: &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("c", "zzz")},
			wantReason: workv1alpha2.BindingReasonNoClusterFit,
			wantMessage: "0/3 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}, " +
				"2 cluster(s) did not match the placement cluster affinity constraint."},
		{name: "tainted cluster already scheduled stays", replicas: 2, placement: &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("c")},
			scheduled: []workv1alpha2.TargetCluster{pt.At("c", 2)},
			want:      []workv1alpha2.TargetCluster{pt.At("c", 2)}},
		// Available 10:5 over 6: a, b, a, a (10/5=2 > 5/3), b (5/3 > 10/7), a.
		{name: "dynamic weights from the resource summary", replicas: 6, placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()},
			want: []workv1alpha2.TargetCluster{pt.At("a", 4), pt.At("b", 2)}},
		{name: "not enough capacity", replicas: 16, placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()},
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "Clusters available replicas 15 are not enough to schedule."},
		{name: "the most available cluster first", replicas: 1,
			placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{pt.ByCluster(1, 1)}},
			want:      []workv1alpha2.TargetCluster{pt.At("a", 1)}},
		{name: "already-scheduled cluster first (locality)", replicas: 1,
			placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{pt.ByCluster(1, 1)}},
			scheduled: []workv1alpha2.TargetCluster{pt.At("b", 1)},
			want:      []workv1alpha2.TargetCluster{pt.At("b", 1)}},
		{name: "first affinity term that schedules", replicas: 1, placement: terms(term("t1", "zzz"), term("t2", "b"), term("t3", "a")),
			want: []workv1alpha2.TargetCluster{pt.At("b", 1)}, wantAffinity: "t2"},
		{name: "terms tried from the observed one", replicas: 1, placement: terms(term("t1", "a"), term("t2", "b")), observed: "t2",
			want: []workv1alpha2.TargetCluster{pt.At("b", 1)}, wantAffinity: "t2"},
		{name: "terms after the observed one", replicas: 1, placement: terms(term("t1", "a"), term("t2", "zzz"), term("t3", "b")), observed: "t2",
			want: []workv1alpha2.TargetCluster{pt.At("b", 1)}, wantAffinity: "t3"},
		{name: "terms before the observed one are not tried", replicas: 1, placement: terms(term("t1", "a"), term("t2", "zzz")), observed: "t2",
			wantReason: workv1alpha2.BindingReasonNoClusterFit, wantMessage: noFit},
		{name: "fresh restarts at the first term", replicas: 1, placement: terms(term("t1", "a"), term("t2", "b")), observed: "t2", fresh: true,
			want: []workv1alpha2.TargetCluster{pt.At("a", 1)}, wantAffinity: "t1"},
		{name: "unknown observed term starts at the first", replicas: 1, placement: terms(term("t1", "a"), term("t2", "b")), observed: "gone",
			want: []workv1alpha2.TargetCluster{pt.At("a", 1)}, wantAffinity: "t1"},
		{
			// t1 finds no cluster, t2 has too little capacity: t1's error.
			name: "all terms fail: the first error", replicas: 20,
			placement:  &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{term("t1", "zzz"), term("t2", "a")}, ReplicaScheduling: pt.DynamicRS()},
			wantReason: workv1alpha2.BindingReasonNoClusterFit, wantMessage: noFit,
		},
		{
			name: "all terms fail: the first error is Unschedulable", replicas: 20,
			placement:  &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{term("t1", "a"), term("t2", "zzz")}, ReplicaScheduling: pt.DynamicRS()},
			wantReason: workv1alpha2.BindingReasonUnschedulable, wantMessage: "Clusters available replicas 10 are not enough to schedule.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := input{
				spec:     pt.BindingSpec(tc.replicas, tc.placement, tc.scheduled...),
				status:   &workv1alpha2.ResourceBindingStatus{SchedulerObservedAffinityName: tc.observed},
				clusters: clusters,
				fresh:    tc.fresh,
			}
			dec, err := schedule(in)
			if !checkErr(t, err, tc.wantReason, tc.wantMessage) {
				if dec.clusters != nil || dec.affinityName != "" {
					t.Errorf("failed decision carries clusters %v, affinity %q", dec.clusters, dec.affinityName)
				}
				return
			}
			if diff := cmp.Diff(tc.want, dec.clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if dec.affinityName != tc.wantAffinity {
				t.Errorf("affinityName = %q, want %q", dec.affinityName, tc.wantAffinity)
			}
		})
	}
}

func TestScheduleConsidered(t *testing.T) {
	t.Parallel()
	in := input{
		spec:   pt.BindingSpec(3, &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("a", "b")}, pt.At("a", 2)),
		status: &workv1alpha2.ResourceBindingStatus{},
		clusters: []*clusterv1alpha1.Cluster{
			pt.Cluster("a", pt.WithPods("1")), pt.Cluster("b", pt.WithPods("4")), pt.Cluster("c"),
		},
	}
	dec, err := schedule(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a": "available 3", // 1 free + 2 held
		"b": "available 4",
		"c": "cluster(s) did not match the placement cluster affinity constraint",
	}
	if diff := cmp.Diff(want, dec.considered); diff != "" {
		t.Errorf("considered (-want +got):\n%s", diff)
	}
}

// A clusterAffinities term's overflowAffinities join the candidates (for
// workloads) as later tiers, each filled up to its capacity in order.
// a (tier 0) has room for 10, b (overflow) for 10.
func TestScheduleOverflowAffinities(t *testing.T) {
	t.Parallel()
	in := input{
		spec: pt.BindingSpec(15, &policyv1alpha1.Placement{
			ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
				AffinityName:       "primary",
				ClusterAffinity:    *pt.OnClusters("a"),
				OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{AffinityName: "burst", ClusterAffinity: *pt.OnClusters("b")}},
			}},
			ReplicaScheduling: pt.DynamicRS(),
		}),
		status:   &workv1alpha2.ResourceBindingStatus{},
		clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("10"))},
	}
	dec, err := schedule(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]workv1alpha2.TargetCluster{pt.At("a", 10), pt.At("b", 5)}, dec.clusters); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}
	if dec.affinityName != "primary" {
		t.Errorf("affinityName = %q, want primary", dec.affinityName)
	}
}

// Overflow tiers take only what the tiers before them cannot run.
func TestScheduleOverflowTiers(t *testing.T) {
	t.Parallel()
	term := func(rs *policyv1alpha1.ReplicaSchedulingStrategy) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{
			ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
				AffinityName:    "primary",
				ClusterAffinity: *pt.OnClusters("a"),
				OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{
					{AffinityName: "burst", ClusterAffinity: *pt.OnClusters("b")},
					{AffinityName: "last", ClusterAffinity: *pt.OnClusters("c")},
				},
			}},
			ReplicaScheduling: rs,
		}
	}
	aggregated := &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}
	clusters := []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("4")), pt.Cluster("c", pt.WithPods("10"))}
	tests := []struct {
		name     string
		replicas int32
		rs       *policyv1alpha1.ReplicaSchedulingStrategy
		want     []workv1alpha2.TargetCluster
		reason   string
	}{
		{name: "primary is enough", replicas: 8, rs: pt.DynamicRS(), want: []workv1alpha2.TargetCluster{pt.At("a", 8)}},
		{name: "two tiers", replicas: 12, rs: pt.DynamicRS(), want: []workv1alpha2.TargetCluster{pt.At("a", 10), pt.At("b", 2)}},
		{name: "three tiers, aggregated", replicas: 20, rs: aggregated, want: []workv1alpha2.TargetCluster{pt.At("a", 10), pt.At("b", 4), pt.At("c", 6)}},
		{name: "not enough anywhere", replicas: 30, rs: pt.DynamicRS(), reason: workv1alpha2.BindingReasonUnschedulable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dec, err := schedule(input{spec: pt.BindingSpec(tc.replicas, term(tc.rs)), status: &workv1alpha2.ResourceBindingStatus{}, clusters: clusters})
			if tc.reason != "" {
				var se *Error
				if !errors.As(err, &se) || se.Reason != tc.reason {
					t.Fatalf("err = %v, want reason %s", err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dec.clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

// Workload affinity: the binding goes where its affinity group already
// runs (anywhere when it is the first); anti-affinity keeps it off the
// clusters of its anti-affinity group.
func TestScheduleWorkloadAffinity(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("10")), pt.Cluster("c", pt.WithPods("10"))}
	duplicated := &policyv1alpha1.Placement{}
	tests := []struct {
		name   string
		groups peerClusters
		want   []string
		reason string
	}{
		{name: "first of its group goes anywhere", want: []string{"a", "b", "c"}},
		{name: "follows its affinity group", groups: peerClusters{affinity: map[string]bool{"b": true}}, want: []string{"b"}},
		{name: "avoids its anti-affinity group", groups: peerClusters{antiAffinity: map[string]bool{"a": true, "c": true}}, want: []string{"b"}},
		{name: "both rule out everything", groups: peerClusters{affinity: map[string]bool{"a": true}, antiAffinity: map[string]bool{"a": true}},
			reason: workv1alpha2.BindingReasonNoClusterFit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dec, err := schedule(input{spec: pt.BindingSpec(1, duplicated), status: &workv1alpha2.ResourceBindingStatus{}, clusters: clusters, groups: tc.groups})
			if tc.reason != "" {
				var se *Error
				if !errors.As(err, &se) || se.Reason != tc.reason {
					t.Fatalf("err = %v, want reason %s", err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range dec.clusters {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}
