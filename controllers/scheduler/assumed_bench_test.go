package scheduler

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator"
	"github.com/flotilla-io/flotilla/placement"
	pt "github.com/flotilla-io/flotilla/placement/placementtest"
)

// BenchmarkScheduleAssuming measures one scheduling decision of a
// Deployment divided over 10 members of 50 nodes each, estimated the way
// the member hub does (every node's room, then the namespace's quota),
// with the scheduler's assumptions: none kept (off), kept but none on the
// members (0), 1000 workloads assumed on every member (1000). Each
// decision is assumed, then taken back as a failed write would, so the
// bookkeeping's whole cost is in: the lock, For on every estimate, Assume
// and its undo.
func BenchmarkScheduleAssuming(b *testing.B) {
	const members, nodes = 10, 50
	var clusters []*clusterv1alpha1.Cluster
	for i := range members {
		clusters = append(clusters, pt.Cluster(fmt.Sprintf("member%02d", i), pt.WithSummary(pt.RL("cpu", "1600", "memory", "12800Gi", "pods", "5500"), nil, nil)))
	}
	var nodeList []*corev1.Node
	var used []estimator.Usage
	for i := range nodes {
		nodeList = append(nodeList, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i)},
			Status: corev1.NodeStatus{Allocatable: pt.RL("cpu", "32", "memory", "256Gi", "pods", "110"),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		})
		used = append(used, estimator.UsageOf(20, map[corev1.ResourceName]int64{corev1.ResourceCPU: 8000, corev1.ResourceMemory: 32 << 30}))
	}
	quotas := []*corev1.ResourceQuota{{
		Spec:   corev1.ResourceQuotaSpec{Hard: pt.RL("requests.cpu", "1000", "pods", "5000")},
		Status: corev1.ResourceQuotaStatus{Hard: pt.RL("requests.cpu", "1000", "pods", "5000"), Used: pt.RL("requests.cpu", "100", "pods", "100")},
	}}
	hub := func(_, _ string, req *workv1alpha2.ReplicaRequirements, a estimator.Assumed) (int64, bool) {
		r := estimator.NewReplica(req)
		sum := r.Sum()
		for i, n := range nodeList {
			if r.Matches(n) {
				sum.Add(n, used[i])
			}
		}
		n := sum.Replicas(a.Nodes)
		if q, ok := estimator.QuotaReplicasAssuming(quotas, req, a.Quota); ok {
			n = min(n, q)
		}
		return n, true
	}
	req := &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}
	spec := func(name string) *workv1alpha2.ResourceBindingSpec {
		s := pt.BindingSpec(20, &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()})
		s.Resource.Namespace, s.Resource.Name = "bench", name
		s.ReplicaRequirements = req
		return s
	}
	for _, assumedPerMember := range []int{-1, 0, 1000} {
		name := fmt.Sprint(assumedPerMember)
		if assumedPerMember < 0 {
			name = "off"
		}
		b.Run("assumed="+name, func(b *testing.B) {
			c := &Controller{estimate: hub, now: time.Now}
			if assumedPerMember >= 0 {
				c.SetAssumptionTTL(time.Hour)
			}
			for i := range assumedPerMember {
				s := spec(fmt.Sprintf("w%d", i))
				var result []workv1alpha2.TargetCluster
				for _, cl := range clusters {
					result = append(result, workv1alpha2.TargetCluster{Name: cl.Name, Replicas: 2})
				}
				c.assumed.Assume(fmt.Sprintf("rb/bench/w%d", i), "1", s, &workv1alpha2.ResourceBindingStatus{}, result)
			}
			b0 := workload("web", 20, false, &policyv1alpha1.Placement{ReplicaScheduling: pt.DynamicRS()})
			b0.Namespace, b0.Spec = "bench", *spec("web")
			t := bindingOf(b0)
			in := placement.Input{Spec: t.spec, Status: t.status, Clusters: clusters, Estimate: c.estimator(t)}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				dec, a, err := c.scheduleAssuming(ctx, "rb/bench/web", t, in)
				if err != nil || len(dec.Clusters) == 0 {
					b.Fatalf("no decision: %v", err)
				}
				a.settle()
			}
		})
	}
}
