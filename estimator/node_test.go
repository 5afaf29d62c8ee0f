package estimator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// list is a ResourceList from name/quantity pairs.
func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// readyNode is a Ready node named name with allocatable kv.
func readyNode(name string, kv ...string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{
			Allocatable: list(kv...),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

func withNode(n *corev1.Node, edit func(*corev1.Node)) *corev1.Node {
	edit(n)
	return n
}

// boundPod is a running pod on node with one container requesting kv.
func boundPod(node string, kv ...string) *corev1.Pod {
	return &corev1.Pod{
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{
			{Name: "c", Resources: corev1.ResourceRequirements{Requests: list(kv...)}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
}

func withPod(p *corev1.Pod, edit func(*corev1.Pod)) *corev1.Pod {
	edit(p)
	return p
}

func requests(kv ...string) *workv1alpha2.ReplicaRequirements {
	return &workv1alpha2.ReplicaRequirements{ResourceRequest: list(kv...)}
}

func claimed(claim workv1alpha2.NodeClaim, kv ...string) *workv1alpha2.ReplicaRequirements {
	return &workv1alpha2.ReplicaRequirements{NodeClaim: &claim, ResourceRequest: list(kv...)}
}

func TestNodeReplicas(t *testing.T) {
	t.Parallel()
	always := corev1.ContainerRestartPolicyAlways
	gpuTaint := corev1.Taint{Key: "gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}
	tolerateGPU := []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	zoneA := map[string]string{"zone": "a"}
	labelled := func(name string, labels map[string]string) *corev1.Node {
		return withNode(readyNode(name, "cpu", "4", "memory", "8Gi", "pods", "10"), func(n *corev1.Node) { n.Labels = labels })
	}
	tainted := func(taints ...corev1.Taint) *corev1.Node {
		return withNode(readyNode("n1", "cpu", "4", "pods", "10"), func(n *corev1.Node) { n.Spec.Taints = taints })
	}

	tests := []struct {
		name  string
		nodes []*corev1.Node
		pods  []*corev1.Pod
		req   *workv1alpha2.ReplicaRequirements
		want  int64
	}{
		{name: "no nodes", req: requests("cpu", "1"), want: 0},
		{
			name:  "no requirements: free pod slots only",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "1", "pods", "10")},
			pods:  []*corev1.Pod{boundPod("n1", "cpu", "1"), boundPod("n1"), boundPod("n1")},
			want:  7,
		},
		{
			name:  "requests without resources: free pod slots only",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "1", "pods", "10")},
			pods:  []*corev1.Pod{boundPod("n1", "cpu", "1")},
			req:   &workv1alpha2.ReplicaRequirements{},
			want:  9,
		},
		{
			name:  "cpu is the tighter resource",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "4", "memory", "8Gi", "pods", "110")},
			pods:  []*corev1.Pod{boundPod("n1", "cpu", "1", "memory", "1Gi")},
			req:   requests("cpu", "500m", "memory", "1Gi"),
			want:  6, // cpu 3000m/500m = 6, memory 7Gi/1Gi = 7
		},
		{
			name:  "pod slots are the tighter resource",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "4", "memory", "8Gi", "pods", "3")},
			pods:  []*corev1.Pod{boundPod("n1", "cpu", "100m")},
			req:   requests("cpu", "100m"),
			want:  2,
		},
		{
			name: "summed over nodes, each with its own pods",
			nodes: []*corev1.Node{
				readyNode("n1", "cpu", "2", "pods", "110"),
				readyNode("n2", "cpu", "2", "pods", "110"),
			},
			pods: []*corev1.Pod{boundPod("n1", "cpu", "1500m"), boundPod("n2", "cpu", "500m")},
			req:  requests("cpu", "500m"),
			want: 1 + 3,
		},
		{
			name:  "terminal and unbound pods take nothing",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "2", "pods", "110")},
			pods: []*corev1.Pod{
				withPod(boundPod("n1", "cpu", "1"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }),
				withPod(boundPod("n1", "cpu", "1"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
				boundPod("", "cpu", "1"),
				boundPod("elsewhere", "cpu", "1"),
				withPod(boundPod("n1", "cpu", "500m"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }),
			},
			req:  requests("cpu", "500m"),
			want: 3,
		},
		{
			name:  "pods being deleted still take their share",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "2", "pods", "110")},
			pods: []*corev1.Pod{withPod(boundPod("n1", "cpu", "1"), func(p *corev1.Pod) {
				p.DeletionTimestamp = &metav1.Time{}
			})},
			req:  requests("cpu", "500m"),
			want: 2,
		},
		{
			name:  "init containers, sidecars, pod overhead",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "10", "pods", "110")},
			pods: []*corev1.Pod{withPod(boundPod("n1", "cpu", "1"), func(p *corev1.Pod) {
				p.Spec.InitContainers = []corev1.Container{
					{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: list("cpu", "1")}},
					{Name: "init", Resources: corev1.ResourceRequirements{Requests: list("cpu", "4")}},
				}
				p.Spec.Overhead = list("cpu", "1")
			})},
			req:  requests("cpu", "1"),
			want: 4, // max(1+1, 1+4) + 1 overhead = 6 taken
		},
		{
			name:  "pod-level requests replace the containers'",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "10", "pods", "110")},
			pods: []*corev1.Pod{withPod(boundPod("n1", "cpu", "1"), func(p *corev1.Pod) {
				p.Spec.Resources = &corev1.ResourceRequirements{Requests: list("cpu", "4")}
			})},
			req:  requests("cpu", "1"),
			want: 6,
		},
		{
			name:  "over-committed node fits none",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "1", "pods", "110"), readyNode("n2", "cpu", "1", "pods", "110")},
			pods:  []*corev1.Pod{boundPod("n1", "cpu", "3")},
			req:   requests("cpu", "500m"),
			want:  0 + 2,
		},
		{
			name:  "node without allocatable pods fits none",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "4")},
			want:  0,
		},
		{
			name:  "extended resource: free units",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "8", "nvidia.com/gpu", "4", "pods", "110")},
			pods:  []*corev1.Pod{boundPod("n1", "nvidia.com/gpu", "1")},
			req:   requests("cpu", "1", "nvidia.com/gpu", "1"),
			want:  3,
		},
		{
			name:  "resource the node does not have",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "8", "pods", "110"), readyNode("n2", "cpu", "8", "nvidia.com/gpu", "2", "pods", "110")},
			req:   requests("nvidia.com/gpu", "1"),
			want:  0 + 2,
		},
		{
			name:  "zero requests and names a node does not account for constrain nothing",
			nodes: []*corev1.Node{readyNode("n1", "cpu", "1", "pods", "5")},
			req:   requests("cpu", "0", "memory", "0", "storage", "1Gi", "pods", "2"),
			want:  5,
		},
		{
			name:  "memory and ephemeral-storage in bytes",
			nodes: []*corev1.Node{readyNode("n1", "memory", "1Gi", "ephemeral-storage", "10Gi", "pods", "110")},
			req:   requests("memory", "100Mi", "ephemeral-storage", "3Gi"),
			want:  3, // memory 10, storage 3
		},
		{
			name: "nodes that are not Ready are skipped",
			nodes: []*corev1.Node{
				withNode(readyNode("n1", "pods", "10"), func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }),
				withNode(readyNode("n2", "pods", "10"), func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionUnknown }),
				withNode(readyNode("n3", "pods", "10"), func(n *corev1.Node) { n.Status.Conditions = nil }),
				readyNode("n4", "pods", "1"),
			},
			want: 1,
		},
		{
			name: "cordoned nodes are skipped",
			nodes: []*corev1.Node{
				withNode(readyNode("n1", "pods", "10"), func(n *corev1.Node) { n.Spec.Unschedulable = true }),
				readyNode("n2", "pods", "1"),
			},
			want: 1,
		},
		{
			name: "cordoned nodes count when the unschedulable taint is tolerated",
			nodes: []*corev1.Node{
				withNode(readyNode("n1", "pods", "10"), func(n *corev1.Node) { n.Spec.Unschedulable = true }),
			},
			req: claimed(workv1alpha2.NodeClaim{Tolerations: []corev1.Toleration{
				{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists}}}),
			want: 10,
		},
		{name: "untolerated NoSchedule taint", nodes: []*corev1.Node{tainted(gpuTaint)}, want: 0},
		{
			name:  "untolerated NoExecute taint",
			nodes: []*corev1.Node{tainted(corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute})},
			want:  0,
		},
		{
			name:  "PreferNoSchedule taint does not keep replicas off",
			nodes: []*corev1.Node{tainted(corev1.Taint{Key: "k", Effect: corev1.TaintEffectPreferNoSchedule})},
			want:  10,
		},
		{
			name:  "tolerated taint",
			nodes: []*corev1.Node{tainted(gpuTaint)},
			req:   claimed(workv1alpha2.NodeClaim{Tolerations: tolerateGPU}),
			want:  10,
		},
		{
			name:  "toleration of another value does not tolerate",
			nodes: []*corev1.Node{tainted(corev1.Taint{Key: "gpu", Value: "false", Effect: corev1.TaintEffectNoSchedule})},
			req:   claimed(workv1alpha2.NodeClaim{Tolerations: tolerateGPU}),
			want:  0,
		},
		{
			name:  "node selector",
			nodes: []*corev1.Node{labelled("a", zoneA), labelled("b", map[string]string{"zone": "b"}), labelled("c", nil)},
			req:   claimed(workv1alpha2.NodeClaim{NodeSelector: zoneA}, "cpu", "1"),
			want:  4,
		},
		{
			name:  "required node affinity on labels",
			nodes: []*corev1.Node{labelled("a", zoneA), labelled("b", map[string]string{"zone": "b"}), labelled("c", nil)},
			req: claimed(workv1alpha2.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a"}}},
			}}}}, "cpu", "1"),
			want: 4 + 4, // b, and c which has no zone
		},
		{
			name:  "required node affinity on the node name, terms ORed",
			nodes: []*corev1.Node{labelled("a", nil), labelled("b", nil), labelled("c", zoneA)},
			req: claimed(workv1alpha2.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpExists}}},
			}}}, "cpu", "2"),
			want: 2 + 2,
		},
		{
			name:  "node selector and affinity must both match",
			nodes: []*corev1.Node{labelled("a", zoneA), labelled("b", zoneA)},
			req: claimed(workv1alpha2.NodeClaim{NodeSelector: zoneA, HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
				{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"b"}}}},
			}}}, "cpu", "2"),
			want: 2,
		},
		{
			name:  "an affinity term that does not parse matches nothing",
			nodes: []*corev1.Node{labelled("a", zoneA)},
			req: claimed(workv1alpha2.NodeClaim{HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "Bogus"}},
			}}}}),
			want: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := NodeReplicas(tc.nodes, tc.pods, tc.req); got != tc.want {
				t.Errorf("NodeReplicas() = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestFitsMatchesSeparately(t *testing.T) {
	t.Parallel()
	// Fits is the arithmetic only: a node Matches rejects still has room.
	n := withNode(readyNode("n1", "cpu", "2", "pods", "10"), func(n *corev1.Node) { n.Spec.Unschedulable = true })
	r := NewReplica(requests("cpu", "500m"))
	if r.Matches(n) {
		t.Errorf("Matches(cordoned node) = true")
	}
	if got := r.Fits(n, PodsUsage([]*corev1.Pod{boundPod("n1", "cpu", "1")})); got != 2 {
		t.Errorf("Fits() = %d, want 2", got)
	}
	if got := r.Fits(n, Usage{}); got != 4 {
		t.Errorf("Fits(zero Usage) = %d, want 4", got)
	}
	if NewReplica(nil).Matches(nil) {
		t.Errorf("Matches(nil) = true")
	}
}

func TestUsageRequests(t *testing.T) {
	failed := withPod(boundPod("n", "cpu", "8"), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })
	u := PodsUsage([]*corev1.Pod{
		boundPod("n", "cpu", "250m", "memory", "1Gi", "nvidia.com/gpu", "1"),
		boundPod("n", "cpu", "1", "memory", "512Mi", "ephemeral-storage", "1Gi"),
		failed,
	})
	if u.Pods() != 2 {
		t.Errorf("Pods() = %d, want 2 (the failed pod released its share)", u.Pods())
	}
	got := u.Requests()
	for name, want := range map[corev1.ResourceName]string{"cpu": "1250m", "memory": "1536Mi", "ephemeral-storage": "1Gi", "nvidia.com/gpu": "1"} {
		q := got[name]
		if q.String() != want {
			t.Errorf("%s = %s, want %s", name, q.String(), want)
		}
	}
	if len(got) != 4 {
		t.Errorf("requests %v, want 4 resources", got)
	}
	if n := len((Usage{}).Requests()); n != 0 {
		t.Errorf("the zero Usage requests %d resources", n)
	}
}
