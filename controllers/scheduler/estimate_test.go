package scheduler

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/apis/cluster/mutation"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestMaxAvailable(t *testing.T) {
	t.Parallel()
	req := func(pairs ...string) *workv1alpha2.ReplicaRequirements {
		return &workv1alpha2.ReplicaRequirements{ResourceRequest: rl(pairs...)}
	}
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		req     *workv1alpha2.ReplicaRequirements
		want    int64
	}{
		{"no resource summary", newCluster("a"), nil, 0},
		{"no resource summary with requests", newCluster("a"), req("cpu", "1"), 0},
		{"pods: allocatable - allocated - allocating",
			newCluster("a", withSummary(rl("pods", "10"), rl("pods", "3"), rl("pods", "2"))), nil, 5},
		{"no pods allocatable", newCluster("a", withSummary(rl("cpu", "8"), nil, nil)), nil, 0},
		{"pods used up", newCluster("a", withSummary(rl("pods", "5"), rl("pods", "5"), nil)), nil, 0},
		{"more pods allocated than allocatable", newCluster("a", withSummary(rl("pods", "5"), rl("pods", "7"), nil)), nil, 0},
		{"requirements without requests", newCluster("a", withPods("4")), &workv1alpha2.ReplicaRequirements{}, 4},
		{"cpu in millicores: (2000m-500m)/250m",
			newCluster("a", withSummary(rl("pods", "100", "cpu", "2"), rl("cpu", "500m"), nil)), req("cpu", "250m"), 6},
		{"cpu floors: 1/300m",
			newCluster("a", withSummary(rl("pods", "100", "cpu", "1"), nil, nil)), req("cpu", "300m"), 3},
		{"memory: (4Gi-1Gi allocating)/512Mi",
			newCluster("a", withSummary(rl("pods", "100", "memory", "4Gi"), nil, rl("memory", "1Gi"))), req("memory", "512Mi"), 6},
		{"allocated and allocating both subtracted",
			newCluster("a", withSummary(rl("pods", "100", "memory", "4Gi"), rl("memory", "1Gi"), rl("memory", "1Gi"))), req("memory", "1Gi"), 2},
		{"the scarcest resource wins",
			newCluster("a", withSummary(rl("pods", "100", "cpu", "4", "memory", "3Gi"), nil, nil)), req("cpu", "500m", "memory", "1Gi"), 3},
		{"pods bound the requests",
			newCluster("a", withSummary(rl("pods", "2", "cpu", "64"), nil, nil)), req("cpu", "100m"), 2},
		{"requested resource the cluster lacks",
			newCluster("a", withSummary(rl("pods", "10", "cpu", "4"), nil, nil)), req("nvidia.com/gpu", "1"), 0},
		{"negative free resource gives 0",
			newCluster("a", withSummary(rl("pods", "10", "cpu", "2"), rl("cpu", "3"), nil)), req("cpu", "1"), 0},
		{"zero requests are ignored",
			newCluster("a", withSummary(rl("pods", "4", "cpu", "1"), nil, nil)), req("cpu", "0"), 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := maxAvailable(tc.cluster, tc.req); got != tc.want {
				t.Errorf("maxAvailable = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestAvailableReplicas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		clusters []*clusterv1alpha1.Cluster
		spec     *workv1alpha2.ResourceBindingSpec
		want     map[string]int64
	}{
		{
			name:     "not a workload fits everywhere",
			clusters: []*clusterv1alpha1.Cluster{newCluster("a"), newCluster("b", withPods("0"))},
			spec:     bindingSpec(0, nil),
			want:     map[string]int64{"a": math.MaxInt32, "b": math.MaxInt32},
		},
		{
			name:     "no replicas but requirements are estimated",
			clusters: []*clusterv1alpha1.Cluster{newCluster("a", withSummary(rl("pods", "4", "cpu", "2"), nil, nil))},
			spec: func() *workv1alpha2.ResourceBindingSpec {
				s := bindingSpec(0, nil)
				s.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: rl("cpu", "1")}
				return s
			}(),
			want: map[string]int64{"a": 2},
		},
		{
			name:     "nil summary gives 0",
			clusters: []*clusterv1alpha1.Cluster{newCluster("a"), newCluster("b", withPods("3"))},
			spec:     bindingSpec(3, nil),
			want:     map[string]int64{"a": 0, "b": 3},
		},
		{
			name:     "replicas already held are added back",
			clusters: []*clusterv1alpha1.Cluster{newCluster("a", withPods("1")), newCluster("b", withPods("1")), newCluster("c")},
			spec:     bindingSpec(5, nil, at("a", 2), at("c", 3)),
			want:     map[string]int64{"a": 3, "b": 1, "c": 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := availableReplicas(tc.clusters, tc.spec)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("availableReplicas (-want +got):\n%s", diff)
			}
		})
	}
}

// API-SPEC §10.3: "unknown (MaxInt32) -> spec.replicas" (Karmada's
// calAvailableReplicas). A cluster whose estimate reaches MaxInt32 should
// weigh spec.replicas in a dynamic division, not MaxInt32.
func TestAvailableReplicasUnknownBecomesSpecReplicas(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{newCluster("a", withPods("1099511627776")), newCluster("b", withPods("10"))}
	got := availableReplicas(clusters, bindingSpec(6, nil))
	if diff := cmp.Diff(map[string]int64{"a": 6, "b": 10}, got); diff != "" {
		t.Errorf("availableReplicas (-want +got):\n%s", diff)
	}
}

func TestMaxAvailableByModels(t *testing.T) {
	t.Parallel()
	req := func(pairs ...string) *workv1alpha2.ReplicaRequirements {
		return &workv1alpha2.ReplicaRequirements{ResourceRequest: rl(pairs...)}
	}
	// The default models (9 grades over cpu and memory); two nodes of grade
	// 6 (>= 32 CPUs, >= 256Gi free) and one of grade 2 (>= 2 CPUs, >= 16Gi).
	modelled := func(pods string) *clusterv1alpha1.Cluster {
		c := newCluster("a", withSummary(rl("pods", pods, "cpu", "66", "memory", "528Gi"), nil, nil))
		c.Spec.ResourceModels = mutation.DefaultResourceModels()
		c.Status.ResourceSummary.AllocatableModelings = make([]clusterv1alpha1.AllocatableModeling, 9)
		for i := range c.Status.ResourceSummary.AllocatableModelings {
			c.Status.ResourceSummary.AllocatableModelings[i].Grade = uint(i)
		}
		c.Status.ResourceSummary.AllocatableModelings[6].Count = 2
		c.Status.ResourceSummary.AllocatableModelings[2].Count = 1
		return c
	}
	tests := []struct {
		name string
		c    *clusterv1alpha1.Cluster
		req  *workv1alpha2.ReplicaRequirements
		want int64
	}{
		// The cluster's sum (66 CPUs) would give 22; no grade-2 node fits 3.
		{"per node: 2 nodes x floor(32/3)", modelled("1000"), req("cpu", "3"), 20},
		{"small requests fit the small node too: 2 x 32/1 + 1 x 2/1", modelled("1000"), req("cpu", "1"), 66},
		{"the scarcest resource per node: 2 x min(32/1, 256Gi/64Gi)", modelled("1000"), req("cpu", "1", "memory", "64Gi"), 8},
		{"beyond every grade's minimum", modelled("1000"), req("cpu", "200"), 0},
		{"pods still bound", modelled("5"), req("cpu", "1"), 5},
		{"an unmodelled resource falls back to the summary", modelled("1000"), req("cpu", "3", "ephemeral-storage", "1"), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := maxAvailable(tc.c, tc.req); got != tc.want {
				t.Errorf("maxAvailable = %d, want %d", got, tc.want)
			}
		})
	}
	noModelings := modelled("1000")
	noModelings.Status.ResourceSummary.AllocatableModelings = nil
	if got := maxAvailable(noModelings, req("cpu", "3")); got != 22 {
		t.Errorf("without modelings maxAvailable = %d, want the summary's 66/3 = 22", got)
	}
}
