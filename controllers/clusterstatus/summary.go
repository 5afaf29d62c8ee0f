package clusterstatus

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// memberCache watches one member's nodes and pods, keeping only what the
// summaries need, so a status update never lists pods.
type memberCache struct {
	cancel  context.CancelFunc
	nodes   store
	pods    store
	key     string // what the client was built from; a change rebuilds the cache
	started time.Time
}

// store is the part of an informer the summaries read.
type store interface {
	GetStore() cache.Store
	HasSynced() bool
}

// trimNode keeps a node's name, allocatable and Ready condition.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	t := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Namespace: n.Namespace, ResourceVersion: n.ResourceVersion}}
	t.Status.Allocatable = n.Status.Allocatable
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			t.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return t, nil
}

// trimPod keeps a pod's node, phase and effective requests.
func trimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	t := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, ResourceVersion: p.ResourceVersion}}
	t.Spec.NodeName = p.Spec.NodeName
	t.Status.Phase = p.Status.Phase
	t.Spec.Overhead = p.Spec.Overhead
	requests := podRequests(p)
	t.Spec.Containers = []corev1.Container{{Name: "requests", Resources: corev1.ResourceRequirements{Requests: requests}}}
	return t, nil
}

// podRequests is what a pod asks for as the kube-scheduler counts it (sum
// of containers and sidecars, at least each init container, pod-level
// requests, plus overhead).
func podRequests(p *corev1.Pod) corev1.ResourceList {
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

func addTo(total, add corev1.ResourceList) {
	for name, q := range add {
		cur := total[name]
		cur.Add(q)
		total[name] = cur
	}
}

func newMemberCache(cs kubernetes.Interface, key string) *memberCache {
	ctx, cancel := context.WithCancel(context.Background())
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0)
	nodes := f.Core().V1().Nodes().Informer()
	pods := f.Core().V1().Pods().Informer()
	_ = nodes.SetTransform(trimNode)
	_ = pods.SetTransform(trimPod)
	f.Start(ctx.Done())
	return &memberCache{cancel: cancel, nodes: nodes, pods: pods, key: key, started: time.Now()}
}

func (m *memberCache) synced() bool { return m.nodes.HasSynced() && m.pods.HasSynced() }

// listed reports whether the node and pod caches have listed and, while
// they have not, whether timeout has passed since they started.
func (m *memberCache) listed(now time.Time, timeout time.Duration) (synced, late bool) {
	if m.synced() {
		return true, false
	}
	return false, now.Sub(m.started) >= timeout
}

func (m *memberCache) stop() { m.cancel() }

// summaries computes nodeSummary and resourceSummary from the caches; the
// resource summary counts the nodes per grade of models.
func (m *memberCache) summaries(models []clusterv1alpha1.ResourceModel) (*clusterv1alpha1.NodeSummary, *clusterv1alpha1.ResourceSummary) {
	ns := &clusterv1alpha1.NodeSummary{}
	rs := &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}, Allocating: corev1.ResourceList{}}
	var nodes []*corev1.Node
	for _, obj := range m.nodes.GetStore().List() {
		n := obj.(*corev1.Node)
		nodes = append(nodes, n)
		ns.TotalNum++
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ns.ReadyNum++
			}
		}
		addTo(rs.Allocatable, n.Status.Allocatable)
	}
	var allocatedPods, allocatingPods int64
	used := map[string]corev1.ResourceList{}
	podCount := map[string]int64{}
	for _, obj := range m.pods.GetStore().List() {
		p := obj.(*corev1.Pod)
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		req := p.Spec.Containers[0].Resources.Requests
		if node := p.Spec.NodeName; node != "" {
			addTo(rs.Allocated, req)
			allocatedPods++
			if used[node] == nil {
				used[node] = corev1.ResourceList{}
			}
			addTo(used[node], req)
			podCount[node]++
		} else {
			addTo(rs.Allocating, req)
			allocatingPods++
		}
	}
	rs.Allocated[corev1.ResourcePods] = *resource.NewQuantity(allocatedPods, resource.DecimalSI)
	if allocatingPods > 0 {
		rs.Allocating[corev1.ResourcePods] = *resource.NewQuantity(allocatingPods, resource.DecimalSI)
	}
	rs.AllocatableModelings = allocatableModelings(models, nodes, used, podCount)
	return ns, rs
}

// memberCaches holds one memberCache per cluster.
type memberCaches struct {
	mu     sync.Mutex
	caches map[string]*memberCache
}

func (m *memberCaches) get(name, key string, cs kubernetes.Interface) *memberCache {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.caches[name]; ok {
		if c.key == key {
			return c
		}
		c.stop()
	}
	c := newMemberCache(cs, key)
	m.caches[name] = c
	return c
}

func (m *memberCaches) drop(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.caches[name]; ok {
		c.stop()
		delete(m.caches, name)
	}
}
