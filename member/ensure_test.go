package member

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// A reader that needs a member's informers before the member is Ready
// (cluster status) starts them with Ensure: the hub keeps them while they
// are asked for, stops them once they are not (and the member is not
// Ready), restarts them on a new client, and drops them with Forget.
func TestHubEnsure(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notReady := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	clusters := []*clusterv1alpha1.Cluster{notReady}
	client := func(key string) *Client {
		cl, err := NewClient(&rest.Config{Host: key})
		if err != nil {
			t.Fatal(err)
		}
		cl.Clientset = fake.NewClientset(testNode("n1", nil, "cpu", "4", "pods", "110"),
			testPod("bound", "n1", corev1.PodRunning, "cpu", "1"), testPod("waiting", "", corev1.PodPending, "cpu", "2"),
			testPod("done", "", corev1.PodSucceeded, "cpu", "8"))
		return cl
	}
	first := client("https://a")
	s := NewHub(func() ([]*clusterv1alpha1.Cluster, error) { return clusters, nil }, func(*clusterv1alpha1.Cluster) (*Client, error) { return first, nil })
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	s.runCtx = ctx

	m := s.Ensure("m1", first)
	if m.Client != first || !m.Since().Equal(now) {
		t.Errorf("Ensure: client %p since %v", m.Client, m.Since())
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		m, _ = s.Member("m1")
		return m.Listed(), nil
	}); err != nil {
		t.Fatal("the ensured member's informers never listed")
	}
	if got := m.NodeList(); len(got) != 1 || got[0].Name != "n1" {
		t.Errorf("NodeList() = %v", got)
	}
	if got := m.BoundNodes(); !slices.Equal(got, []string{"n1"}) {
		t.Errorf("BoundNodes() = %v, want [n1]", got)
	}
	if u, err := m.NodeUsage("n1"); err != nil || u.Pods() != 1 {
		t.Errorf("NodeUsage(n1) = %d pods, %v", u.Pods(), err)
	}
	u, err := m.UnboundUsage()
	if cpu := u.Requests()[corev1.ResourceCPU]; err != nil || u.Pods() != 1 || cpu.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("UnboundUsage() = %d pods %v, %v; want only the pending pod's (not the finished one's)", u.Pods(), u.Requests(), err)
	}

	// Asked for within two minutes: kept though not Ready.
	now = now.Add(time.Minute)
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Member("m1"); !ok {
		t.Fatal("an ensured member was stopped within two minutes")
	}
	// The same client again: the same informers.
	if again := s.Ensure("m1", first); !again.Since().Equal(m.Since()) {
		t.Error("Ensure with the same client restarted the informers")
	}
	// A new client (new endpoint or credentials): started again.
	now = now.Add(time.Second)
	second := client("https://b")
	if m2 := s.Ensure("m1", second); m2.Client != second || !m2.Since().Equal(now) {
		t.Error("Ensure with a new client kept the old informers")
	}
	// Not asked for since more than two minutes, not Ready: stopped.
	now = now.Add(2*time.Minute + time.Second)
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Member("m1"); ok {
		t.Fatal("a member neither Ready nor asked for was kept")
	}
	// Ready: the hub starts it itself; Forget drops it at once.
	ready := notReady.DeepCopy()
	ready.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}
	clusters = []*clusterv1alpha1.Cluster{ready}
	if err := s.sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Member("m1"); !ok {
		t.Fatal("a Ready member has no informers")
	}
	s.Forget("m1")
	if _, ok := s.Member("m1"); ok {
		t.Fatal("Forget kept the member")
	}
}
