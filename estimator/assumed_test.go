package estimator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// assumedPods is the usage of pods assumed pods requesting kv each, in the
// units of Value.
func assumedPods(pods int64, kv ...string) Usage {
	requests := map[corev1.ResourceName]int64{}
	for name, q := range list(kv...) {
		requests[name] = Value(name, q) * pods
	}
	return UsageOf(pods, requests)
}

func TestMaxReplicasAssuming(t *testing.T) {
	t.Parallel()
	// Two nodes of 4 CPUs and 10 pods; n1 runs a 1-CPU pod: 3 + 4 one-CPU
	// replicas fit, 7 CPUs and 19 pod slots are free.
	nodes := []*corev1.Node{readyNode("n1", "cpu", "4", "pods", "10"), readyNode("n2", "cpu", "4", "pods", "10")}
	pods := []*corev1.Pod{boundPod("n1", "cpu", "1")}
	// Fragmented: 1.5 CPUs free on each of two nodes.
	halves := []*corev1.Node{readyNode("h1", "cpu", "1500m", "pods", "10"), readyNode("h2", "cpu", "1500m", "pods", "10")}
	gpu := []*corev1.Node{readyNode("g1", "cpu", "4", "nvidia.com/gpu", "2", "pods", "10")}
	tests := []struct {
		name    string
		nodes   []*corev1.Node
		quotas  []*corev1.ResourceQuota
		req     *workv1alpha2.ReplicaRequirements
		assumed Assumed
		want    int64
	}{
		{name: "nothing assumed", nodes: nodes, req: requests("cpu", "1"), want: 7},
		{name: "assumed cpu taken from the free sum", nodes: nodes, req: requests("cpu", "1"),
			assumed: Assumed{Nodes: assumedPods(2, "cpu", "1500m")}, want: 4},
		{name: "assumed beyond the free room", nodes: nodes, req: requests("cpu", "1"),
			assumed: Assumed{Nodes: assumedPods(5, "cpu", "2")}, want: 0},
		{name: "assumed pods take pod slots", nodes: nodes, req: requests("cpu", "100m"),
			assumed: Assumed{Nodes: assumedPods(15)}, want: 19 - 15},
		{name: "a resource the replica does not request constrains nothing", nodes: nodes, req: requests("cpu", "1"),
			assumed: Assumed{Nodes: assumedPods(1, "memory", "1Gi")}, want: 7},
		// The sum of per-node fits bounds the result: the summed room (3
		// CPUs) would say three.
		{name: "never more than the per-node fits", nodes: halves, req: requests("cpu", "1"),
			assumed: Assumed{Nodes: assumedPods(1)}, want: 2},
		{name: "fragmented nodes: the summed room decides", nodes: halves, req: requests("cpu", "1"),
			assumed: Assumed{Nodes: assumedPods(1, "cpu", "1500m")}, want: 1},
		{name: "extended resources", nodes: gpu, req: requests("cpu", "1", "nvidia.com/gpu", "1"),
			assumed: Assumed{Nodes: assumedPods(1, "nvidia.com/gpu", "1")}, want: 1},
		{name: "no matching node: nothing to take from", req: requests("cpu", "1"),
			assumed: Assumed{Nodes: assumedPods(1, "cpu", "1")}, want: 0},
		{name: "quota: assumed counts as used", nodes: nodes, req: requests("cpu", "1"),
			quotas:  []*corev1.ResourceQuota{quota([]string{"cpu", "5"}, []string{"cpu", "1"})},
			assumed: Assumed{Quota: map[string]Usage{"": assumedPods(2, "cpu", "1")}}, want: 2},
		{name: "quota: pods", nodes: nodes, req: requests("cpu", "1"),
			quotas:  []*corev1.ResourceQuota{quota([]string{"pods", "4"}, []string{"pods", "1"})},
			assumed: Assumed{Quota: map[string]Usage{"": assumedPods(3, "cpu", "10m")}}, want: 0},
		{name: "quota: count/pods and requests.cpu", nodes: nodes, req: requests("cpu", "1"),
			quotas:  []*corev1.ResourceQuota{quota([]string{"count/pods", "10", "requests.cpu", "6"}, []string{"count/pods", "1", "requests.cpu", "1"})},
			assumed: Assumed{Quota: map[string]Usage{"": assumedPods(8, "cpu", "500m")}}, want: 1},
		{name: "quota: the namespace's assumed do not take the nodes", nodes: nodes, req: requests("cpu", "1"),
			assumed: Assumed{Quota: map[string]Usage{"": assumedPods(2, "cpu", "1")}}, want: 7},
		{name: "quota: assumed of a priority class the quota does not count", nodes: nodes, req: withPriority(requests("cpu", "1"), "high"),
			quotas:  []*corev1.ResourceQuota{scoped(quota([]string{"cpu", "5"}, []string{"cpu", "0"}), nil, priorityIn(corev1.ScopeSelectorOpIn, "high"))},
			assumed: Assumed{Quota: map[string]Usage{"low": assumedPods(4, "cpu", "1"), "high": assumedPods(1, "cpu", "1")}}, want: 4},
		{name: "quota: unscoped counts every class", nodes: nodes, req: withPriority(requests("cpu", "1"), "high"),
			quotas:  []*corev1.ResourceQuota{quota([]string{"cpu", "6"}, []string{"cpu", "0"})},
			assumed: Assumed{Quota: map[string]Usage{"low": assumedPods(4, "cpu", "1"), "high": assumedPods(1, "cpu", "1")}}, want: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var bound []*corev1.Pod
			if len(tc.nodes) > 0 && tc.nodes[0].Name == "n1" {
				bound = pods
			}
			if got := MaxReplicasAssuming(tc.nodes, bound, tc.quotas, tc.req, tc.assumed); got != tc.want {
				t.Errorf("MaxReplicasAssuming() = %d, want %d", got, tc.want)
			}
			if tc.assumed.IsZero() {
				return
			}
			// Assumed replicas only ever lower the estimate.
			if without := MaxReplicas(tc.nodes, bound, tc.quotas, tc.req); without < tc.want {
				t.Errorf("MaxReplicas() without assumed = %d, less than with (%d)", without, tc.want)
			}
		})
	}
}
