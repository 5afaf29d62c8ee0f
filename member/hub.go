package member

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Hub runs one set of informers per member: every Ready member, and a
// member a reader asked for with Ensure (the cluster status controller,
// which needs them before the member is Ready) while it keeps asking.
// Readers register per-member state of their own with Register: the hub
// builds it with each member's informers, builds it again when the
// member's connection changes and stops it when the member stops.
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

	// mu is held by whoever starts or stops members, their informers and
	// the registered per-member state.
	mu sync.RWMutex
	// members are the running members' informers, one PerMember as any
	// reader's; registered are the readers' (Register), built and stopped
	// with them. Both are changed with mu held.
	members    *PerMember[*member]
	registered []Registrant
	// resources are the kinds readers registered with AddResource; asked
	// the kinds readers asked for in each member with Watch, started again
	// whenever the member starts, until its Cluster goes.
	resources map[schema.GroupVersionResource]*registeredResource
	asked     map[string]sets.Set[schema.GroupVersionResource]
	// runCtx is the context of Run, the parent of members' informers.
	runCtx context.Context
}

// SetShared makes the member informers read shared where it holds their
// resource; call it before Run.
func (s *Hub) SetShared(shared Shared) { s.shared = shared }

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
	// asked for them (Unix nanoseconds; zero: never).
	started time.Time
	ensured atomic.Int64
}

// ensuredAt is when a reader last asked for the member's informers.
func (m *member) ensuredAt() time.Time {
	n := m.ensured.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// NewHub returns a Hub over the clusters listed by clusters, reached with
// client. Nothing runs before Run.
func NewHub(clusters func() ([]*clusterv1alpha1.Cluster, error), client func(*clusterv1alpha1.Cluster) (*Client, error)) *Hub {
	s := &Hub{clusters: clusters, client: client, resync: 30 * time.Second, switchCheck: defaultSwitchCheck, keep: 2 * time.Minute,
		now: time.Now, trigger: make(chan struct{}, 1), runCtx: context.Background(),
		asked: map[string]sets.Set[schema.GroupVersionResource]{}}
	s.members = NewPerMember(func(name string, cl *Client) (*member, func()) {
		m := s.start(s.runCtx, name, cl)
		return m, m.stop
	})
	return s
}

// Registrant is a PerMember of any kind of state, as Register takes it.
type Registrant interface {
	Sync(want map[string]*Client)
	Delete(name string)
	ensure(name string, cl *Client)
}

// Register has the hub drive p until ctx ends: p holds a state for each
// member the hub runs, built at once for the members running now, when a
// member starts, and again when its connection changes; stopped when the
// member stops, and for every member when ctx ends.
func (s *Hub) Register(ctx context.Context, p Registrant) {
	s.mu.Lock()
	s.registered = append(s.registered, p)
	p.Sync(s.running())
	s.mu.Unlock()
	if ctx.Done() == nil {
		return
	}
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		defer s.mu.Unlock()
		s.registered = slices.DeleteFunc(s.registered, func(r Registrant) bool { return r == p })
		p.Sync(nil)
	}()
}

// running returns the clients of the running members. Callers hold s.mu.
func (s *Hub) running() map[string]*Client {
	out := map[string]*Client{}
	for _, name := range s.members.Names() {
		if cl, ok := s.members.Client(name); ok {
			out[name] = cl
		}
	}
	return out
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
			s.apply(nil)
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
	now := s.now()
	for _, c := range clusters {
		// A member a reader asked for lately is kept on its client.
		if m, ok := s.members.Get(c.Name); ok && c.DeletionTimestamp == nil && now.Sub(m.ensuredAt()) < s.keep {
			want[c.Name] = m.client
		}
	}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyLocked(want)
	s.forgetAsked(clusters)
	s.syncResources(clusters)
	return nil
}

// apply starts the members wanted and not running (or running with another
// connection) and stops the others, with the state readers registered.
func (s *Hub) apply(want map[string]*Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applyLocked(want)
}

func (s *Hub) applyLocked(want map[string]*Client) {
	s.members.Sync(want)
	for _, p := range s.registered {
		p.Sync(want)
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
	m := s.members.Ensure(name, cl)
	for _, p := range s.registered {
		p.ensure(name, cl)
	}
	m.ensured.Store(s.now().UnixNano())
	return m.snapshot()
}

// Forget stops a member's informers, and the state readers registered for
// it, at once (its Cluster was deleted).
func (s *Hub) Forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members.Delete(name)
	for _, p := range s.registered {
		p.Delete(name)
	}
	delete(s.asked, name)
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
	// The kinds readers asked for in this member watch again.
	for gvr := range s.asked[name] {
		if reg, ok := s.resources[gvr]; ok {
			s.startResource(m, reg)
		}
	}
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
	ms := s.members.Values()
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.snapshot())
	}
	return out
}

// Member returns one member's informers.
func (s *Hub) Member(name string) (Member, bool) {
	m, ok := s.members.Get(name)
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
