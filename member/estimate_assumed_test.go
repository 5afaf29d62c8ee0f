package member

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/flotilla-io/flotilla/estimator"
)

// TestMaxReplicasAssuming: what the scheduler assumes on a member is taken
// from its nodes' summed room and, in its namespace, from its quotas.
func TestMaxReplicasAssuming(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(
		testNode("n1", nil, "cpu", "4", "pods", "110"),
		testNode("n2", nil, "cpu", "2", "pods", "110"),
		testPod("p1", "n1", corev1.PodRunning, "cpu", "1"),
		testQuota("limited", []string{"requests.cpu", "10"}, []string{"requests.cpu", "4"}),
	)
	s := NewHub(nil, nil)
	startMember(ctx, s, "m1", &Client{Clientset: client})
	defer s.apply(nil)
	eventually(t, s, "m1", "limited", cpuRequest("1"), 3+2)

	twoCPUs := estimator.UsageOf(2, map[corev1.ResourceName]int64{corev1.ResourceCPU: 2000})
	for _, tc := range []struct {
		name, namespace string
		assumed         estimator.Assumed
		want            int64
	}{
		{name: "nothing assumed", namespace: "limited", want: 5},
		{name: "assumed on the nodes", namespace: "elsewhere", assumed: estimator.Assumed{Nodes: twoCPUs}, want: 3},
		{name: "assumed in the quota", namespace: "limited", assumed: estimator.Assumed{Quota: map[string]estimator.Usage{"": estimator.UsageOf(5, map[corev1.ResourceName]int64{corev1.ResourceCPU: 5000})}}, want: 1},
		{name: "both", namespace: "limited", assumed: estimator.Assumed{Nodes: twoCPUs, Quota: map[string]estimator.Usage{"": twoCPUs}}, want: 3},
	} {
		var got int64
		var ok bool
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			got, ok = s.MaxReplicasAssuming("m1", tc.namespace, cpuRequest("1"), tc.assumed)
			return ok && got == tc.want, nil
		})
		if err != nil {
			t.Errorf("%s: MaxReplicasAssuming() = %d, %t; want %d", tc.name, got, ok, tc.want)
		}
	}
}
