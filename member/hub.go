package member

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Hub runs the informers of every Ready member.
type Hub struct {
	clusters func() ([]*clusterv1alpha1.Cluster, error)
	client   func(*clusterv1alpha1.Cluster) (*Client, error)
	resync   time.Duration
	trigger  chan struct{}

	// shared is the other cache of member objects in this process, if any;
	// a member watch checks every switchCheck whether it appeared.
	shared      Shared
	switchCheck time.Duration

	mu      sync.RWMutex
	members map[string]*member
}

// SetShared makes the pod and node informers read shared where it holds
// their resource; call it before Run.
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
	usage  *usageCache
	cancel context.CancelFunc
}

// New returns a Hub over the clusters listed by clusters, reached with
// client. Nothing runs before Run.
func NewHub(clusters func() ([]*clusterv1alpha1.Cluster, error), client func(*clusterv1alpha1.Cluster) (*Client, error)) *Hub {
	return &Hub{clusters: clusters, client: client, resync: 30 * time.Second, switchCheck: 5 * time.Second, trigger: make(chan struct{}, 1), members: map[string]*member{}}
}

// Trigger asks for the set of members to be reconciled soon (a Cluster
// changed).
func (s *Hub) Trigger() {
	select {
	case s.trigger <- struct{}{}:
	default:
	}
}

// Run reconciles the members until ctx ends, then stops their informers.
func (s *Hub) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("member-informers")
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
	return nil
}

// apply starts the members wanted and not running (or running with another
// connection) and stops the others.
func (s *Hub) apply(ctx context.Context, want map[string]*Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, m := range s.members {
		if cl, ok := want[name]; !ok || cl.Key() != m.key {
			m.cancel()
			m.podSource.forget()
			m.nodeSource.forget()
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

func (s *Hub) start(ctx context.Context, name string, cl *Client) *member {
	ctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(cl.Clientset, 0, informers.WithTransform(Trim))
	podSource, nodeSource, podInformer, nodeInformer := s.podsAndNodes(name, cl.Clientset)
	m := &member{name: name, key: cl.Key(), client: cl, cancel: cancel,
		pods: f.InformerFor(&corev1.Pod{}, podInformer), nodes: f.InformerFor(&corev1.Node{}, nodeInformer),
		quotas: f.Core().V1().ResourceQuotas().Informer(), usage: newUsageCache(),
		podSource: podSource, nodeSource: nodeSource}
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
	// Pods and Nodes read the member's informers; they are complete only
	// when Synced.
	Pods   corelisters.PodLister
	Nodes  corelisters.NodeLister
	Synced bool

	podIndex, nodeIndex cache.Indexer
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
		Pods:     corelisters.NewPodLister(m.pods.GetIndexer()),
		Nodes:    corelisters.NewNodeLister(m.nodes.GetIndexer()),
		Synced:   m.pods.HasSynced() && m.nodes.HasSynced(),
		podIndex: m.pods.GetIndexer(), nodeIndex: m.nodes.GetIndexer()}
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
		if o, ok := o.(metav1.Object); ok && selector.Matches(labels.Set(o.GetLabels())) {
			return true
		}
	}
	return false
}
