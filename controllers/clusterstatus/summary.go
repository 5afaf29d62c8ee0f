package clusterstatus

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/estimator"
)

// Informers is what the status reads of a member's pods and nodes: a
// member.Member of the process's member hub, which every reader of the
// member shares (one watch per kind per member).
type Informers interface {
	// Listed reports whether the pods and nodes have listed; Since is
	// when their informers started.
	Listed() bool
	Since() time.Time
	NodeList() []*corev1.Node
	// BoundNodes names the nodes pods not finished are bound to, known
	// nodes or not; NodeUsage is what those pods take of one.
	BoundNodes() []string
	NodeUsage(node string) (estimator.Usage, error)
	// UnboundUsage is what the pods waiting for a node ask for.
	UnboundUsage() (estimator.Usage, error)
}

// listed reports whether the member's pods and nodes have listed and,
// while they have not, whether timeout has passed since they started.
func listed(m Informers, now time.Time, timeout time.Duration) (synced, late bool) {
	if m.Listed() {
		return true, false
	}
	return false, now.Sub(m.Since()) >= timeout
}

func addTo(total, add corev1.ResourceList) {
	for name, q := range add {
		cur := total[name]
		cur.Add(q)
		total[name] = cur
	}
}

// summaries computes nodeSummary and resourceSummary from the member's
// informers, as Karmada's cluster status controller does: allocated is
// what pods bound to a node take (finished pods do not count), allocating
// what pods waiting for a node ask for; the resource summary counts the
// nodes per grade of models.
func summaries(m Informers, models []clusterv1alpha1.ResourceModel) (*clusterv1alpha1.NodeSummary, *clusterv1alpha1.ResourceSummary, error) {
	ns := &clusterv1alpha1.NodeSummary{}
	rs := &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}, Allocating: corev1.ResourceList{}}
	nodes := m.NodeList()
	for _, n := range nodes {
		ns.TotalNum++
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ns.ReadyNum++
			}
		}
		addTo(rs.Allocatable, n.Status.Allocatable)
	}
	var allocatedPods int64
	used := map[string]corev1.ResourceList{}
	podCount := map[string]int64{}
	for _, node := range m.BoundNodes() {
		u, err := m.NodeUsage(node)
		if err != nil {
			return nil, nil, err
		}
		used[node], podCount[node] = u.Requests(), u.Pods()
		addTo(rs.Allocated, used[node])
		allocatedPods += u.Pods()
	}
	unbound, err := m.UnboundUsage()
	if err != nil {
		return nil, nil, err
	}
	addTo(rs.Allocating, unbound.Requests())
	rs.Allocated[corev1.ResourcePods] = *resource.NewQuantity(allocatedPods, resource.DecimalSI)
	if unbound.Pods() > 0 {
		rs.Allocating[corev1.ResourcePods] = *resource.NewQuantity(unbound.Pods(), resource.DecimalSI)
	}
	rs.AllocatableModelings = allocatableModelings(models, nodes, used, podCount)
	return ns, rs, nil
}
