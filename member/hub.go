package member

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Hub runs one set of informers per member: every Ready member, and a
// member a reader asked for with Ensure (the cluster status controller,
// which needs them before the member is Ready) while it keeps asking.
type Hub struct {
	clusters func() ([]*clusterv1alpha1.Cluster, error)
	client   func(*clusterv1alpha1.Cluster) (*Client, error)
	resync   time.Duration
	trigger  chan struct{}

	// shared is the other cache of member objects in this process, if any;
	// a member watch checks every switchCheck whether it appeared.
	shared      Shared
	switchCheck time.Duration

	// keep is how long a member Ensure started is kept without being
	// Ready or asked for again.
	keep time.Duration
	now  func() time.Time

	mu      sync.RWMutex
	members map[string]*member
	// resources are the kinds readers registered with AddResource.
	resources map[schema.GroupVersionResource]*registeredResource
	// runCtx is the context of Run, the parent of members' informers.
	runCtx context.Context
}

// SetShared makes the pod and node informers read shared where it holds
// their resource; call it before Run.
func (s *Hub) SetShared(shared Shared) { s.shared = shared }

// Shared is the other cache of member objects the hub reads (nil: none):
// other readers of member objects (execution) build their informers on
// it with NewSource.
func (s *Hub) Shared() Shared { return s.shared }

// member is the informers of one cluster, built from one connection.
type member struct {
	name   string
	key    string
	client *Client
	// pods are indexed by the node they are bound to (nodeNameIndex).
	pods   cache.SharedIndexInformer
	nodes  cache.SharedIndexInformer
	quotas cache.SharedIndexInformer
	// podSource and nodeSource choose the shared cache or the member.
	podSource, nodeSource *sourceLW
	// usage memoizes what the pods of each node take of it.
	usage *usageCache
	// resources are the running informers of registered resources.
	resources map[schema.GroupVersionResource]*resourceInformer
	// ctx is the context of the member's informers; cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
	// started is when the informers started; ensured when a reader last
	// asked for them (zero: never).
	started, ensured time.Time
}

// New returns a Hub over the clusters listed by clusters, reached with
// client. Nothing runs before Run.
func NewHub(clusters func() ([]*clusterv1alpha1.Cluster, error), client func(*clusterv1alpha1.Cluster) (*Client, error)) *Hub {
	return &Hub{clusters: clusters, client: client, resync: 30 * time.Second, switchCheck: defaultSwitchCheck, keep: 2 * time.Minute,
		now: time.Now, trigger: make(chan struct{}, 1), members: map[string]*member{}, runCtx: context.Background()}
}

// Trigger asks for the set of members to be reconciled soon (a Cluster
// changed).
func (s *Hub) Trigger() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

// TriggerOn has every change of clusters' informer trigger the hub.
func (s *Hub) TriggerOn(clusters cache.SharedIndexInformer) error {
	_, err := clusters.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.Trigger() },
		UpdateFunc: func(_, _ any) { s.Trigger() },
		DeleteFunc: func(any) { s.Trigger() },
	})
	return err
}

// Run reconciles the members until ctx ends, then stops their informers.
func (s *Hub) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("member-informers")
	s.mu.Lock()
	s.runCtx = ctx
	s.mu.Unlock()
	ticker := time.NewTicker(s.resync)
	defer ticker.Stop()
	for {
		if err := s.sync(ctx); err != nil {
			logger.Error(err, "Reconciling member informers")
		}
		select {
		case <-ctx.Done():
			s.apply(ctx, nil)
			return
		case <-s.trigger:
			time.Sleep(100 * time.Millisecond) // coalesce a burst of changes
		case <-ticker.C:
		}
	}
}

func (s *Hub) sync(ctx context.Context) error {
	clusters, err := s.clusters()
	if err != nil {
		return err
	}
	want := map[string]*Client{}
	s.mu.RLock()
	now := s.now()
	for _, c := range clusters {
		// A member a reader asked for lately is kept on its client.
		if m, ok := s.members[c.Name]; ok && c.DeletionTimestamp == nil && !m.ensured.IsZero() && now.Sub(m.ensured) < s.keep {
			want[c.Name] = m.client
		}
	}
	s.mu.RUnlock()
	for _, c := range clusters {
		if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) || c.DeletionTimestamp != nil {
			continue
		}
		cl, err := s.client(c)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("No client for member", "cluster", c.Name, "err", err)
			continue
		}
		want[c.Name] = cl
	}
	s.apply(ctx, want)
	s.mu.Lock()
	s.syncResources(clusters)
	s.mu.Unlock()
	return nil
}

// apply starts the members wanted and not running (or running with another
// connection) and stops the others.
func (s *Hub) apply(ctx context.Context, want map[string]*Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, m := range s.members {
		if cl, ok := want[name]; !ok || cl.Key() != m.key {
			m.stop()
			delete(s.members, name)
		}
	}
	for name, cl := range want {
		if _, ok := s.members[name]; ok {
			continue
		}
		s.members[name] = s.start(ctx, name, cl)
	}
}

// Ensure returns the member's informers, starting them (or starting them
// again on a new client) when needed: for a reader that needs them before
// the member is Ready. The hub keeps them while the member is Ready or
// asked for at least every two minutes, and stops them when its Cluster
// goes away.
func (s *Hub) Ensure(name string, cl *Client) Member {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.members[name]
	if ok && m.key != cl.Key() {
		m.stop()
		ok = false
	}
	if !ok {
		m = s.start(s.runCtx, name, cl)
		s.members[name] = m
	}
	m.ensured = s.now()
	return m.snapshot()
}

// Forget stops a member's informers at once (its Cluster was deleted).
func (s *Hub) Forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.members[name]; ok {
		m.stop()
		delete(s.members, name)
	}
}

func (m *member) stop() {
	m.cancel()
	m.podSource.forget()
	m.nodeSource.forget()
	for _, r := range m.resources {
		r.stop()
	}
}

func (s *Hub) start(ctx context.Context, name string, cl *Client) *member {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(cl.Clientset, 0, informers.WithTransform(Trim))
	podSource, nodeSource, podInformer, nodeInformer := s.podsAndNodes(name, cl.Clientset)
	m := &member{name: name, key: cl.Key(), client: cl, ctx: ctx, cancel: cancel, resources: map[schema.GroupVersionResource]*resourceInformer{},
		pods: f.InformerFor(&corev1.Pod{}, podInformer), nodes: f.InformerFor(&corev1.Node{}, nodeInformer),
		quotas: f.Core().V1().ResourceQuotas().Informer(), usage: newUsageCache(),
		podSource: podSource, nodeSource: nodeSource, started: s.now()}
	if err := m.watchUsage(); err != nil {
		// Only an informer already started refuses; these are new.
		klog.FromContext(ctx).Error(err, "Indexing member pods by node", "cluster", name)
	}
	f.Start(ctx.Done())
	return m
}

// Member is one member's informers at the time of the call.
type Member struct {
	Name   string
	Client *Client
	// Synced: the pod and node informers have listed; until then what
	// they hold is incomplete.
	Synced bool
	// Started is when the informers started.
	Started time.Time

	podIndex, nodeIndex cache.Indexer
	usage               *usageCache
}

// Members returns the members whose informers run, in no order.
func (s *Hub) Members() []Member {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Member, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, m.snapshot())
	}
	return out
}

// Member returns one member's informers.
func (s *Hub) Member(name string) (Member, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.members[name]
	if !ok {
		return Member{}, false
	}
	return m.snapshot(), true
}

func (m *member) snapshot() Member {
	return Member{Name: m.name, Client: m.client,
		Synced: m.pods.HasSynced() && m.nodes.HasSynced(), Started: m.started,
		podIndex: m.pods.GetIndexer(), nodeIndex: m.nodes.GetIndexer(), usage: m.usage}
}

// HasPods reports whether the member may have pods of namespace ("" for
// all) matching selector: true when it has one, or when its informer has
// not synced yet and it cannot tell. It stops at the first match.
func (m Member) HasPods(namespace string, selector labels.Selector) bool {
	if !m.Synced {
		return true
	}
	if namespace == "" {
		return anyMatches(m.podIndex.List(), selector)
	}
	pods, err := m.podIndex.ByIndex(cache.NamespaceIndex, namespace)
	return err != nil || anyMatches(pods, selector)
}

// HasNodes is HasPods for nodes.
func (m Member) HasNodes(selector labels.Selector) bool {
	if !m.Synced {
		return true
	}
	return anyMatches(m.nodeIndex.List(), selector)
}

// anyMatches reports whether one of objs has labels selector matches.
func anyMatches(objs []any, selector labels.Selector) bool {
	if selector.Empty() {
		return len(objs) > 0
	}
	for _, o := range objs {
		if selector.Matches(labels.Set(labelsOf(o))) {
			return true
		}
	}
	return false
}

// labelsOf returns the labels of a hub object (a Pod or a trimmed node).
func labelsOf(obj any) map[string]string {
	switch o := obj.(type) {
	case *Pod:
		return o.Labels()
	case metav1.Object:
		return o.GetLabels()
	}
	return nil
}

// Pods returns the member's pods of namespace ("" for all) that selector
// matches (shared: do not modify).
func (m Member) Pods(namespace string, selector labels.Selector) ([]*Pod, error) {
	var objs []any
	var err error
	if namespace == "" {
		objs = m.podIndex.List()
	} else if objs, err = m.podIndex.ByIndex(cache.NamespaceIndex, namespace); err != nil {
		return nil, err
	}
	var out []*Pod
	for _, o := range objs {
		if p, ok := o.(*Pod); ok && selector.Matches(labels.Set(p.Labels())) {
			out = append(out, p)
		}
	}
	return out, nil
}

// HasPod reports whether the member may have the pod namespace/name: true
// when it has, or when its informer has not synced and it cannot tell.
func (m Member) HasPod(namespace, name string) bool {
	if !m.Synced {
		return true
	}
	_, ok, err := m.podIndex.GetByKey(namespace + "/" + name)
	return ok || err != nil
}

// HasNode is HasPod for a node.
func (m Member) HasNode(name string) bool {
	if !m.Synced {
		return true
	}
	_, ok, err := m.nodeIndex.GetByKey(name)
	return ok || err != nil
}
