package placement

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// comp is a component of replicas, each requesting name, quantity pairs.
func comp(name string, replicas int32, requests ...string) workv1alpha2.Component {
	c := workv1alpha2.Component{Name: name, Replicas: replicas}
	if len(requests) > 0 {
		c.ReplicaRequirements = &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: pt.RL(requests...)}
	}
	return c
}

// flink is a job manager (1 × 1 CPU, 1Gi) and two task managers (2 × 2
// CPU, 2Gi): a set is 3 pods, 5 CPUs and 5Gi.
var flink = []workv1alpha2.Component{
	comp("jobmanager", 1, "cpu", "1", "memory", "1Gi"),
	comp("taskmanager", 2, "cpu", "2", "memory", "2Gi"),
}

// wholeSet is one set of flink on cluster name.
func wholeSet(name string) workv1alpha2.TargetCluster {
	return workv1alpha2.TargetCluster{Name: name, Components: []workv1alpha2.TargetComponent{
		{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: 2}}}
}

func componentsSpec(p *policyv1alpha1.Placement, scheduled ...workv1alpha2.TargetCluster) *workv1alpha2.ResourceBindingSpec {
	spec := pt.BindingSpec(0, p, scheduled...)
	spec.Components = flink
	return spec
}

func TestMaxAvailableSets(t *testing.T) {
	t.Parallel()
	summary := func(pairs ...string) pt.ClusterOpt { return pt.WithSummary(pt.RL(pairs...), nil, nil) }
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		comps   []workv1alpha2.Component
		want    int64
	}{
		{"no resource summary", pt.Cluster("a"), flink, 0},
		{"no free pods", pt.Cluster("a", summary("cpu", "100", "memory", "100Gi")), flink, 0},
		{"pods per set: 10/3", pt.Cluster("a", summary("pods", "10")), []workv1alpha2.Component{comp("jm", 1), comp("tm", 2)}, 3},
		{"fewer pods than one set", pt.Cluster("a", summary("pods", "2", "cpu", "100", "memory", "100Gi")), flink, 0},
		{"cpu per set: 12/5", pt.Cluster("a", summary("pods", "100", "cpu", "12", "memory", "100Gi")), flink, 2},
		{"memory per set: 14Gi/5Gi", pt.Cluster("a", summary("pods", "100", "cpu", "100", "memory", "14Gi")), flink, 2},
		{"one set's worth is not enough of a component alone",
			// 4 CPUs run a job manager and a task manager, not the whole set.
			pt.Cluster("a", summary("pods", "100", "cpu", "4", "memory", "100Gi")), flink, 0},
		{"allocated and allocating subtracted",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "100", "cpu", "20", "memory", "100Gi"), pt.RL("cpu", "6"), pt.RL("cpu", "4"))), flink, 2},
		{"a resource the cluster lacks", pt.Cluster("a", summary("pods", "100", "cpu", "100")), flink, 0},
		{"cpu in millicores: 1/(2×250m + 200m)",
			pt.Cluster("a", summary("pods", "100", "cpu", "1")), []workv1alpha2.Component{comp("a", 2, "cpu", "250m"), comp("b", 1, "cpu", "200m")}, 1},
		{"components without replicas: the free pods", pt.Cluster("a", summary("pods", "7")), []workv1alpha2.Component{comp("a", 0, "cpu", "1")}, 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := maxAvailableSets(tc.cluster, tc.comps); got != tc.want {
				t.Errorf("maxAvailableSets = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestAvailableSets(t *testing.T) {
	t.Parallel()
	big := pt.Cluster("big", pt.WithSummary(pt.RL("pods", "100", "cpu", "100", "memory", "100Gi"), nil, nil)) // 20 sets by CPU and memory
	// perReplica answers per component: 5 task managers (2 sets), 10 job managers.
	perReplica := func(_ *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) (int64, bool) {
		if req.Namespace != "default" {
			t.Errorf("estimated in namespace %q, want the binding's", req.Namespace)
		}
		if req.ResourceRequest.Cpu().MilliValue() == 2000 {
			return 5, true
		}
		return 10, true
	}
	tests := []struct {
		name         string
		scheduled    []workv1alpha2.TargetCluster
		estimate     Estimator
		estimateSets SetEstimator
		want         int64
	}{
		{name: "the summary alone", want: 20},
		{name: "each component asked of the per-replica estimator", estimate: perReplica, want: 2},
		{name: "the per-replica estimator does not know", want: 20,
			estimate: func(*clusterv1alpha1.Cluster, *workv1alpha2.ReplicaRequirements) (int64, bool) { return 0, false }},
		{name: "the set estimator, when there is one", estimate: perReplica, want: 4,
			estimateSets: func(*clusterv1alpha1.Cluster, []workv1alpha2.Component) (int64, bool) { return 4, true }},
		{name: "the set estimator above the summary", want: 20,
			estimateSets: func(*clusterv1alpha1.Cluster, []workv1alpha2.Component) (int64, bool) { return 50, true }},
		{name: "the set held there counts", scheduled: []workv1alpha2.TargetCluster{wholeSet("big")}, want: 1,
			estimateSets: func(*clusterv1alpha1.Cluster, []workv1alpha2.Component) (int64, bool) { return 0, true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := input{spec: componentsSpec(&policyv1alpha1.Placement{}, tc.scheduled...), estimate: tc.estimate, estimateSets: tc.estimateSets}
			if got := availableSets([]*clusterv1alpha1.Cluster{big}, in)["big"]; got != tc.want {
				t.Errorf("available sets = %d, want %d", got, tc.want)
			}
		})
	}
}

// A binding with components is scheduled as a whole: clusters that cannot
// host one set are no candidates, each selected cluster gets a whole set,
// and Divided divides nothing (Karmada); a cluster spread constraint of
// one cluster picks the one that hosts the most sets.
func TestScheduleComponents(t *testing.T) {
	t.Parallel()
	summary := func(cpu, memory string) pt.ClusterOpt {
		return pt.WithSummary(pt.RL("pods", "100", "cpu", cpu, "memory", memory), nil, nil)
	}
	clusters := []*clusterv1alpha1.Cluster{
		pt.Cluster("a", summary("6", "8Gi")),   // 1 set
		pt.Cluster("b", summary("12", "16Gi")), // 2 sets
		pt.Cluster("c", summary("4", "64Gi")),  // no set: CPU for part of one
		pt.Cluster("d", pt.WithPods("2")),      // no set: 2 pods of 3
		pt.Cluster("e", summary("100", "100Gi"), // 20 sets, but tainted
			pt.WithTaint("k", "", "NoSchedule")),
	}
	one := []policyv1alpha1.SpreadConstraint{pt.ByCluster(1, 1)}
	tests := []struct {
		name         string
		placement    *policyv1alpha1.Placement
		scheduled    []workv1alpha2.TargetCluster
		estimateSets SetEstimator
		want         []workv1alpha2.TargetCluster
		wantReason   string
		wantMessage  string
	}{
		{name: "duplicated: a whole set on every cluster that hosts one", placement: &policyv1alpha1.Placement{},
			want: []workv1alpha2.TargetCluster{wholeSet("a"), wholeSet("b")}},
		{name: "duplicated, explicitly", placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.DuplicatedRS(), ClusterAffinity: pt.OnClusters("a", "c")},
			want: []workv1alpha2.TargetCluster{wholeSet("a")}},
		{name: "divided dynamically: nothing divided, a whole set each", placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()},
			want: []workv1alpha2.TargetCluster{wholeSet("a"), wholeSet("b")}},
		{name: "aggregated: a whole set each", placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.AggregatedRS()},
			want: []workv1alpha2.TargetCluster{wholeSet("a"), wholeSet("b")}},
		{name: "static weights: a whole set each", placement: &policyv1alpha1.Placement{ReplicaScheduling: pt.StaticRS(pt.Weight(1, pt.OnClusters("a")))},
			want: []workv1alpha2.TargetCluster{wholeSet("a"), wholeSet("b")}},
		{name: "one cluster: the one with the most sets", placement: &policyv1alpha1.Placement{SpreadConstraints: one},
			want: []workv1alpha2.TargetCluster{wholeSet("b")}},
		{name: "one cluster, divided: the one with the most sets", placement: &policyv1alpha1.Placement{SpreadConstraints: one, ReplicaScheduling: pt.AggregatedRS()},
			want: []workv1alpha2.TargetCluster{wholeSet("b")}},
		{name: "one cluster: where it already runs (locality)", placement: &policyv1alpha1.Placement{SpreadConstraints: one},
			scheduled: []workv1alpha2.TargetCluster{wholeSet("a")},
			want:      []workv1alpha2.TargetCluster{wholeSet("a")}},
		{name: "the set estimator rules a cluster out", placement: &policyv1alpha1.Placement{SpreadConstraints: one},
			estimateSets: func(c *clusterv1alpha1.Cluster, _ []workv1alpha2.Component) (int64, bool) { return 0, c.Name == "b" },
			want:         []workv1alpha2.TargetCluster{wholeSet("a")}},
		{name: "no cluster can host a set", placement: &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("c", "d", "e")},
			wantReason: workv1alpha2.BindingReasonUnschedulable,
			wantMessage: "0/5 clusters are available: 1 cluster(s) had untolerated taint {k:NoSchedule}, " +
				"2 cluster(s) cannot host a whole set of the components, 2 cluster(s) did not match the placement cluster affinity constraint."},
		{name: "the cluster it runs on keeps it though now full", placement: &policyv1alpha1.Placement{ClusterAffinity: pt.OnClusters("c")},
			scheduled: []workv1alpha2.TargetCluster{wholeSet("c")},
			want:      []workv1alpha2.TargetCluster{wholeSet("c")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := input{spec: componentsSpec(tc.placement, tc.scheduled...), status: &workv1alpha2.ResourceBindingStatus{},
				clusters: clusters, estimateSets: tc.estimateSets}
			dec, err := schedule(in)
			if !checkErr(t, err, tc.wantReason, tc.wantMessage) {
				return
			}
			if diff := cmp.Diff(tc.want, dec.clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}

// The overflow tiers of a divided placement take the workload only when
// the tiers before them have no cluster that can host a set.
func TestScheduleComponentsOverflow(t *testing.T) {
	t.Parallel()
	p := &policyv1alpha1.Placement{
		ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:       "primary",
			ClusterAffinity:    *pt.OnClusters("a"),
			OverflowAffinities: []policyv1alpha1.OverflowClusterAffinity{{AffinityName: "burst", ClusterAffinity: *pt.OnClusters("b")}},
		}},
		ReplicaScheduling: pt.DynamicRS(),
	}
	room := pt.WithSummary(pt.RL("pods", "100", "cpu", "10", "memory", "10Gi"), nil, nil)
	for name, tc := range map[string]struct {
		clusters []*clusterv1alpha1.Cluster
		want     []workv1alpha2.TargetCluster
	}{
		"the primary hosts it":      {clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a", room), pt.Cluster("b", room)}, want: []workv1alpha2.TargetCluster{wholeSet("a")}},
		"the primary cannot, burst": {clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("2")), pt.Cluster("b", room)}, want: []workv1alpha2.TargetCluster{wholeSet("b")}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dec, err := schedule(input{spec: componentsSpec(p), status: &workv1alpha2.ResourceBindingStatus{}, clusters: tc.clusters})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, dec.clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
		})
	}
}
