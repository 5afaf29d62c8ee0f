package placement

import (
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
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
		return &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL(pairs...)}
	}
	tests := []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		req     *workv1alpha2.ReplicaRequirements
		want    int64
	}{
		{"no resource summary", pt.Cluster("a"), nil, 0},
		{"no resource summary with requests", pt.Cluster("a"), req("cpu", "1"), 0},
		{"pods: allocatable - allocated - allocating",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "10"), pt.RL("pods", "3"), pt.RL("pods", "2"))), nil, 5},
		{"no pods allocatable", pt.Cluster("a", pt.WithSummary(pt.RL("cpu", "8"), nil, nil)), nil, 0},
		{"pods used up", pt.Cluster("a", pt.WithSummary(pt.RL("pods", "5"), pt.RL("pods", "5"), nil)), nil, 0},
		{"more pods allocated than allocatable", pt.Cluster("a", pt.WithSummary(pt.RL("pods", "5"), pt.RL("pods", "7"), nil)), nil, 0},
		{"requirements without requests", pt.Cluster("a", pt.WithPods("4")), &workv1alpha2.ReplicaRequirements{}, 4},
		{"cpu in millicores: (2000m-500m)/250m",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "100", "cpu", "2"), pt.RL("cpu", "500m"), nil)), req("cpu", "250m"), 6},
		{"cpu floors: 1/300m",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "100", "cpu", "1"), nil, nil)), req("cpu", "300m"), 3},
		{"memory: (4Gi-1Gi allocating)/512Mi",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "100", "memory", "4Gi"), nil, pt.RL("memory", "1Gi"))), req("memory", "512Mi"), 6},
		{"allocated and allocating both subtracted",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "100", "memory", "4Gi"), pt.RL("memory", "1Gi"), pt.RL("memory", "1Gi"))), req("memory", "1Gi"), 2},
		{"the scarcest resource wins",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "100", "cpu", "4", "memory", "3Gi"), nil, nil)), req("cpu", "500m", "memory", "1Gi"), 3},
		{"pods bound the requests",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "2", "cpu", "64"), nil, nil)), req("cpu", "100m"), 2},
		{"requested resource the cluster lacks",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "10", "cpu", "4"), nil, nil)), req("nvidia.com/gpu", "1"), 0},
		{"negative free resource gives 0",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "10", "cpu", "2"), pt.RL("cpu", "3"), nil)), req("cpu", "1"), 0},
		{"zero requests are ignored",
			pt.Cluster("a", pt.WithSummary(pt.RL("pods", "4", "cpu", "1"), nil, nil)), req("cpu", "0"), 4},
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
			clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b", pt.WithPods("0"))},
			spec:     pt.BindingSpec(0, nil),
			want:     map[string]int64{"a": math.MaxInt32, "b": math.MaxInt32},
		},
		{
			name:     "no replicas but requirements are estimated",
			clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithSummary(pt.RL("pods", "4", "cpu", "2"), nil, nil))},
			spec: func() *workv1alpha2.ResourceBindingSpec {
				s := pt.BindingSpec(0, nil)
				s.ReplicaRequirements = &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL("cpu", "1")}
				return s
			}(),
			want: map[string]int64{"a": 2},
		},
		{
			name:     "nil summary gives 0",
			clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a"), pt.Cluster("b", pt.WithPods("3"))},
			spec:     pt.BindingSpec(3, nil),
			want:     map[string]int64{"a": 0, "b": 3},
		},
		{
			name:     "replicas already held are added back",
			clusters: []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("1")), pt.Cluster("b", pt.WithPods("1")), pt.Cluster("c")},
			spec:     pt.BindingSpec(5, nil, pt.At("a", 2), pt.At("c", 3)),
			want:     map[string]int64{"a": 3, "b": 1, "c": 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := availableReplicas(tc.clusters, tc.spec, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("availableReplicas (-want +got):\n%s", diff)
			}
		})
	}
}

// An unknown estimate (MaxInt32) counts as spec.replicas (Karmada's
// calAvailableReplicas). A cluster whose estimate reaches MaxInt32 should weigh
// spec.replicas in a dynamic division, not MaxInt32.
func TestAvailableReplicasUnknownBecomesSpecReplicas(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("1099511627776")), pt.Cluster("b", pt.WithPods("10"))}
	got := availableReplicas(clusters, pt.BindingSpec(6, nil), nil)
	if diff := cmp.Diff(map[string]int64{"a": 6, "b": 10}, got); diff != "" {
		t.Errorf("availableReplicas (-want +got):\n%s", diff)
	}
}

func TestMaxAvailableByModels(t *testing.T) {
	t.Parallel()
	req := func(pairs ...string) *workv1alpha2.ReplicaRequirements {
		return &workv1alpha2.ReplicaRequirements{ResourceRequest: pt.RL(pairs...)}
	}
	// The default models (9 grades over cpu and memory); two nodes of grade
	// 6 (>= 32 CPUs, >= 256Gi free) and one of grade 2 (>= 2 CPUs, >= 16Gi).
	modelled := func(pods string) *clusterv1alpha1.Cluster {
		c := pt.Cluster("a", pt.WithSummary(pt.RL("pods", pods, "cpu", "66", "memory", "528Gi"), nil, nil))
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

// The accurate estimator lowers the summary's answer, never raises it, and
// is ignored where it does not know; held replicas are added back.
func TestAvailableReplicasWithEstimator(t *testing.T) {
	t.Parallel()
	clusters := []*clusterv1alpha1.Cluster{pt.Cluster("a", pt.WithPods("10")), pt.Cluster("b", pt.WithPods("10")), pt.Cluster("c", pt.WithPods("10"))}
	est := func(c *clusterv1alpha1.Cluster, _ *workv1alpha2.ReplicaRequirements) (int64, bool) {
		switch c.Name {
		case "a":
			return 3, true // a quota allows 3 more
		case "b":
			return 50, true // more than the summary says
		}
		return 0, false
	}
	got := availableReplicas(clusters, pt.BindingSpec(6, nil, pt.At("a", 2)), est)
	if diff := cmp.Diff(map[string]int64{"a": 5, "b": 10, "c": 10}, got); diff != "" {
		t.Errorf("availableReplicas (-want +got):\n%s", diff)
	}
}
