package member

import (
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/estimator"
)

// nodeNameIndex indexes pods by the node they are bound to; unbound and
// terminal pods, which take nothing of any node, are left out.
const nodeNameIndex = "nodeName"

// unboundIndex indexes, under "true", the pods waiting for a node (not
// bound, not terminal): what a cluster's resourceSummary calls allocating.
const unboundIndex = "unbound"

func podUnbound(obj any) ([]string, error) {
	p, ok := obj.(*Pod)
	if !ok || p.NodeName != "" || p.terminal() {
		return nil, nil
	}
	return []string{"true"}, nil
}

func podNodeName(obj any) ([]string, error) {
	p, ok := obj.(*Pod)
	if !ok || p.NodeName == "" || p.terminal() {
		return nil, nil
	}
	return []string{p.NodeName}, nil
}

// usageOf is what pods (the hub's) take: a slot each and their requests.
// Terminal pods have released theirs.
func usageOf(objs []any) estimator.Usage {
	u := estimator.NewUsage()
	for _, o := range objs {
		if p, ok := o.(*Pod); ok && !p.terminal() {
			u.AddPod(p.shape.usage)
		}
	}
	return u
}

// MaxReplicas returns how many more replicas described by req the member
// cluster can run, computed from its cached nodes, pods and (when namespace
// is not empty) the ResourceQuotas of namespace: estimator.MaxReplicas's
// arithmetic. ok is false when the member's informers are not running or
// have not synced yet, and the caller has no estimate from here.
//
// namespace is the namespace the replicas run in; it is passed separately
// from req.Namespace, which replica requirements carry only with the
// ResourceQuotaEstimate feature gate.
func (s *Hub) MaxReplicas(cluster, namespace string, req *workv1alpha2.ReplicaRequirements) (int64, bool) {
	return s.MaxReplicasAssuming(cluster, namespace, req, estimator.Assumed{})
}

// MaxReplicasAssuming is MaxReplicas once what the scheduler assumes on the
// member (assigned, its pods not seen yet) is taken, as
// estimator.MaxReplicasAssuming takes it.
func (s *Hub) MaxReplicasAssuming(cluster, namespace string, req *workv1alpha2.ReplicaRequirements, assumed estimator.Assumed) (int64, bool) {
	m, ok := s.members.Get(cluster)
	if !ok {
		return 0, false
	}
	n, err := m.maxReplicas(namespace, req, assumed)
	if err != nil {
		return 0, false
	}
	return n, true
}

// errNotSynced is returned before the member's caches are complete.
var errNotSynced = fmt.Errorf("member informers have not synced")

func (m *member) maxReplicas(namespace string, req *workv1alpha2.ReplicaRequirements, assumed estimator.Assumed) (int64, error) {
	if !m.pods.HasSynced() || !m.nodes.HasSynced() || !m.quotas.HasSynced() {
		return 0, errNotSynced
	}
	r := estimator.NewReplica(req)
	sum := r.Sum()
	for _, obj := range m.nodes.GetStore().List() {
		node, ok := obj.(*corev1.Node)
		if !ok || !r.Matches(node) {
			continue
		}
		used, err := m.usage.get(node.Name, func() (estimator.Usage, error) { return m.nodeUsage(node.Name) })
		if err != nil {
			return 0, err
		}
		sum.Add(node, used)
	}
	n := sum.Replicas(assumed.Nodes)
	if namespace == "" {
		return n, nil
	}
	quotas, err := corelisters.NewResourceQuotaLister(m.quotas.GetIndexer()).ResourceQuotas(namespace).List(labels.Everything())
	if err != nil {
		return 0, err
	}
	if q, ok := estimator.QuotaReplicasAssuming(quotas, req, assumed.Quota); ok {
		n = min(n, q)
	}
	return n, nil
}

// nodeUsage computes what the pods bound to node take of it, from the pods
// the index holds for it.
func (m *member) nodeUsage(node string) (estimator.Usage, error) {
	return nodeUsage(m.pods.GetIndexer(), node)
}

func nodeUsage(index cache.Indexer, node string) (estimator.Usage, error) {
	objs, err := index.ByIndex(nodeNameIndex, node)
	if err != nil {
		return estimator.Usage{}, err
	}
	return usageOf(objs), nil
}

// watchUsage indexes the pods by node and has pod and node events
// invalidate the usage they change. It must run before the informers start.
func (m *member) watchUsage() error {
	if err := m.pods.AddIndexers(cache.Indexers{nodeNameIndex: podNodeName, unboundIndex: podUnbound}); err != nil {
		return err
	}
	if _, err := m.pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: m.usage.touchPod,
		UpdateFunc: func(old, cur any) {
			if usageChanged(old, cur) {
				m.usage.touchPod(old)
				m.usage.touchPod(cur)
			}
		},
		DeleteFunc: m.usage.touchPod,
	}); err != nil {
		return err
	}
	_, err := m.nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: m.usage.forgetNode})
	return err
}

// usageChanged reports whether a pod update may change what it takes of a
// node: its trimmed spec (node, requests) or whether it is terminal. Status
// changes such as readiness, the bulk of pod updates, do not.
func usageChanged(old, cur any) bool {
	o, ok1 := old.(*Pod)
	c, ok2 := cur.(*Pod)
	if !ok1 || !ok2 {
		return true
	}
	// Shapes are interned: equal requests are the same pointer.
	return o.Phase != c.Phase || o.NodeName != c.NodeName || o.shape != c.shape
}

// usageCache memoizes each node's usage. Pod events bump the generation of
// the nodes they touch; a usage computed at an older generation is computed
// again from the pod index. Events reach handlers after the index has the
// change, and the generation is read before the index, so a usage is never
// kept for a generation whose change it missed.
type usageCache struct {
	mu    sync.Mutex
	gen   map[string]uint64
	usage map[string]generationUsage
}

type generationUsage struct {
	gen   uint64
	usage estimator.Usage
}

func newUsageCache() *usageCache {
	return &usageCache{gen: map[string]uint64{}, usage: map[string]generationUsage{}}
}

// get returns node's usage, computing it when it changed since last time.
func (c *usageCache) get(node string, compute func() (estimator.Usage, error)) (estimator.Usage, error) {
	c.mu.Lock()
	gen := c.gen[node]
	cached, ok := c.usage[node]
	c.mu.Unlock()
	if ok && cached.gen == gen {
		return cached.usage, nil
	}
	u, err := compute()
	if err != nil {
		return estimator.Usage{}, err
	}
	c.mu.Lock()
	if cur, ok := c.usage[node]; !ok || cur.gen <= gen {
		c.usage[node] = generationUsage{gen: gen, usage: u}
	}
	c.mu.Unlock()
	return u, nil
}

// touchPod invalidates the usage of the node a pod is bound to.
func (c *usageCache) touchPod(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	p, ok := obj.(*Pod)
	if !ok || p.NodeName == "" {
		return
	}
	c.mu.Lock()
	c.gen[p.NodeName]++
	c.mu.Unlock()
}

// forgetNode drops a deleted node's usage. Its generation is bumped, not
// dropped: restarting it at zero could make a usage computed concurrently,
// before the deletion, look current again.
func (c *usageCache) forgetNode(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return
	}
	c.mu.Lock()
	delete(c.usage, n.Name)
	c.gen[n.Name]++
	c.mu.Unlock()
}

// NodeList returns the member's nodes (complete when Synced).
func (m Member) NodeList() []*corev1.Node {
	objs := m.nodeIndex.List()
	out := make([]*corev1.Node, 0, len(objs))
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			out = append(out, n)
		}
	}
	return out
}

// NodeUsage returns what the pods bound to node take of it (memoized until
// one of them changes).
func (m Member) NodeUsage(node string) (estimator.Usage, error) {
	return m.usage.get(node, func() (estimator.Usage, error) { return nodeUsage(m.podIndex, node) })
}

// UnboundUsage is what the pods waiting for a node (not bound, not
// terminal) ask for: a resourceSummary's allocating.
func (m Member) UnboundUsage() (estimator.Usage, error) {
	objs, err := m.podIndex.ByIndex(unboundIndex, "true")
	if err != nil {
		return estimator.Usage{}, err
	}
	return usageOf(objs), nil
}

// BoundNodes names the nodes pods (not terminal) are bound to, whether the
// member's node list has them or not.
func (m Member) BoundNodes() []string { return m.podIndex.ListIndexFuncValues(nodeNameIndex) }

// Listed reports whether the pods and nodes have listed (Synced).
func (m Member) Listed() bool { return m.Synced }

// Since is when the informers started.
func (m Member) Since() time.Time { return m.Started }
