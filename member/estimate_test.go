package member

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func testNode(name string, labels map[string]string, kv ...string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Status: corev1.NodeStatus{Allocatable: list(kv...),
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
	}
}

func testPod(name, node string, phase corev1.PodPhase, kv ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{
			{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{Requests: list(kv...)}}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}

func testQuota(namespace string, hard, used []string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: namespace},
		Spec:       corev1.ResourceQuotaSpec{Hard: list(hard...)},
		Status:     corev1.ResourceQuotaStatus{Hard: list(hard...), Used: list(used...)},
	}
}

func cpuRequest(q string) *workv1alpha2.ReplicaRequirements {
	return &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", q)}
}

// eventually polls MaxReplicas until it returns want.
func eventually(t *testing.T, s *Hub, cluster, namespace string, req *workv1alpha2.ReplicaRequirements, want int64) {
	t.Helper()
	var got int64
	var ok bool
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		got, ok = s.MaxReplicas(cluster, namespace, req)
		return ok && got == want, nil
	})
	if err != nil {
		t.Fatalf("MaxReplicas(%q, %q) = %d, %t; want %d, true", cluster, namespace, got, ok, want)
	}
}

func TestSetMaxReplicas(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(
		testNode("n1", map[string]string{"zone": "a"}, "cpu", "4", "pods", "110"),
		testNode("n2", map[string]string{"zone": "b"}, "cpu", "2", "pods", "110"),
		testPod("p1", "n1", corev1.PodRunning, "cpu", "1"),
		testPod("p2", "n1", corev1.PodSucceeded, "cpu", "3"),
		testPod("p3", "", corev1.PodPending, "cpu", "3"),
		testQuota("limited", []string{"requests.cpu", "10"}, []string{"requests.cpu", "8"}),
	)
	s := NewHub(nil, nil)
	startMember(ctx, s, "m1", &Client{Clientset: client})
	defer s.apply(nil)

	if _, ok := s.MaxReplicas("unknown", "", cpuRequest("1")); ok {
		t.Errorf("MaxReplicas(unknown member) ok = true")
	}
	// n1: 4 - 1 (p2 has succeeded, p3 is unbound) = 3; n2: 2.
	eventually(t, s, "m1", "", cpuRequest("1"), 3+2)
	eventually(t, s, "m1", "elsewhere", cpuRequest("1"), 3+2)
	eventually(t, s, "m1", "limited", cpuRequest("1"), 2)
	zoneB := &workv1alpha2.ReplicaRequirements{ResourceRequest: list("cpu", "500m"),
		NodeClaim: &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"zone": "b"}}}
	eventually(t, s, "m1", "", zoneB, 4)

	// Pod changes reach the memoized usage of their node.
	pods := client.CoreV1().Pods("ns")
	if _, err := pods.Create(ctx, testPod("p4", "n2", corev1.PodRunning, "cpu", "1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "m1", "", zoneB, 2)
	if err := pods.Delete(ctx, "p1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "m1", "", cpuRequest("1"), 4+1)
	p3 := testPod("p3", "n2", corev1.PodRunning, "cpu", "3")
	if _, err := pods.Update(ctx, p3, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "m1", "", cpuRequest("1"), 4+0)
	p3.Status.Phase = corev1.PodFailed
	if _, err := pods.Update(ctx, p3, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "m1", "", cpuRequest("1"), 4+1)

	// Node changes are read as they come.
	n2 := testNode("n2", map[string]string{"zone": "b"}, "cpu", "2", "pods", "110")
	n2.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	if _, err := client.CoreV1().Nodes().Update(ctx, n2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "m1", "", cpuRequest("1"), 4)
	if err := client.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, s, "m1", "", cpuRequest("1"), 0)
}

func TestSetMaxReplicasNotSynced(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the informers never run
	s := NewHub(nil, nil)
	startMember(ctx, s, "m1", &Client{Clientset: fake.NewClientset()})
	if n, ok := s.MaxReplicas("m1", "ns", cpuRequest("1")); ok {
		t.Errorf("MaxReplicas(not synced) = %d, true; want false", n)
	}
}

func TestUsageCache(t *testing.T) {
	t.Parallel()
	c := newUsageCache()
	computed := 0
	compute := func() (estimator.Usage, error) { computed++; return estimator.Usage{}, nil }
	get := func() {
		t.Helper()
		if _, err := c.get("n1", compute); err != nil {
			t.Fatal(err)
		}
	}
	get()
	get()
	if computed != 1 {
		t.Fatalf("computed %d times, want 1", computed)
	}

	// Events of pods of other nodes, or unbound, change nothing here.
	c.touchPod(NewPod(testPod("p", "n2", corev1.PodRunning)))
	c.touchPod(NewPod(testPod("p", "", corev1.PodPending)))
	get()
	if computed != 1 {
		t.Fatalf("computed %d times, want 1", computed)
	}

	c.touchPod(cache.DeletedFinalStateUnknown{Key: "ns/p", Obj: NewPod(testPod("p", "n1", corev1.PodRunning))})
	get()
	get()
	if computed != 2 {
		t.Fatalf("computed %d times, want 2", computed)
	}

	// A change while computing: what was computed is returned, not kept.
	touchDuring := func() (estimator.Usage, error) {
		computed++
		c.touchPod(NewPod(testPod("p", "n1", corev1.PodRunning)))
		return estimator.Usage{}, nil
	}
	c.touchPod(NewPod(testPod("p", "n1", corev1.PodRunning)))
	if _, err := c.get("n1", touchDuring); err != nil {
		t.Fatal(err)
	}
	get()
	if computed != 4 {
		t.Fatalf("computed %d times, want 4", computed)
	}

	c.forgetNode(testNode("n1", nil))
	get()
	if computed != 5 {
		t.Fatalf("computed %d times, want 5", computed)
	}

	failing := func() (estimator.Usage, error) { return estimator.Usage{}, errors.New("boom") }
	c.touchPod(NewPod(testPod("p", "n1", corev1.PodRunning)))
	if _, err := c.get("n1", failing); err == nil {
		t.Fatal("get() error = nil, want the compute error")
	}
}

func TestUsageChanged(t *testing.T) {
	t.Parallel()
	base := testPod("p", "n1", corev1.PodRunning, "cpu", "1")
	edit := func(f func(*corev1.Pod)) *corev1.Pod {
		p := base.DeepCopy()
		f(p)
		return p
	}
	tests := []struct {
		name string
		cur  any
		want bool
	}{
		{name: "readiness", cur: edit(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}), want: false},
		{name: "labels", cur: edit(func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }), want: false},
		{name: "bound", cur: edit(func(p *corev1.Pod) { p.Spec.NodeName = "n2" }), want: true},
		{name: "terminal", cur: edit(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), want: true},
		{name: "resized", cur: edit(func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = list("cpu", "2") }), want: true},
		{name: "same quantity written differently", cur: edit(func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = list("cpu", "1000m")
		}), want: false},
		{name: "not a pod", cur: "x", want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cur := tc.cur
			if p, ok := cur.(*corev1.Pod); ok {
				cur = NewPod(p)
			}
			if got := usageChanged(NewPod(base), cur); got != tc.want {
				t.Errorf("usageChanged() = %t, want %t", got, tc.want)
			}
		})
	}
}
