package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/selectors"
)

// Manager runs one Store per (member cluster, resource) that some
// ResourceRegistry selects in a Ready cluster matching its targetCluster,
// starting and stopping them as registries and clusters change, and
// reports in each registry's status what is cached and what failed. Every
// replica of the server runs its own (the cache is not leader-elected).
type Manager struct {
	clusters   func() ([]*clusterv1alpha1.Cluster, error)
	registries func() ([]*searchv1alpha1.ResourceRegistry, error)
	client     func(*clusterv1alpha1.Cluster) (*member.Client, error)
	// writeStatus sets the conditions of a registry when they changed.
	writeStatus func(ctx context.Context, r *searchv1alpha1.ResourceRegistry, conds []metav1.Condition) error
	index       Indexer
	resync      time.Duration
	minBackoff  time.Duration

	trigger chan struct{}
	release releaser

	mu sync.RWMutex
	// members holds the running stores of each member, on the member's
	// connection: all of a member's stop when its connection changes (a
	// new Secret, endpoint or tunnel) or when no store of it is wanted
	// (member.PerMember, driven by apply). Changed with mu held.
	members *member.PerMember[*memberStores]
	// changed is closed (and replaced) when the stores of a resource change.
	changed map[schema.GroupVersionResource]chan struct{}
	// touched are the resources whose stores the running apply started or
	// stopped; logger is its logger. Both are apply's, with mu held.
	touched sets.Set[schema.GroupVersionResource]
	logger  klog.Logger
}

// memberStores are the running stores of one member, by resource.
type memberStores struct {
	running map[schema.GroupVersionResource]*running
}

// Config is what a Manager needs.
type Config struct {
	Clusters    func() ([]*clusterv1alpha1.Cluster, error)
	Registries  func() ([]*searchv1alpha1.ResourceRegistry, error)
	Client      func(*clusterv1alpha1.Cluster) (*member.Client, error)
	WriteStatus func(ctx context.Context, r *searchv1alpha1.ResourceRegistry, conds []metav1.Condition) error
	// Index, when set, is told of every change (the full-text index).
	Index Indexer
	// Resync is how often the manager reconsiders everything even without
	// a change (retrying failures); default 15s.
	Resync time.Duration
}

// NewManager returns a Manager; Run starts it.
func NewManager(c Config) *Manager {
	if c.Resync <= 0 {
		c.Resync = 15 * time.Second
	}
	m := &Manager{
		clusters: c.Clusters, registries: c.Registries, client: c.Client, writeStatus: c.WriteStatus,
		index: c.Index, resync: c.Resync, minBackoff: time.Second,
		trigger: make(chan struct{}, 1), changed: map[schema.GroupVersionResource]chan struct{}{},
		touched: sets.New[schema.GroupVersionResource](), logger: klog.Background(),
	}
	m.members = member.NewPerMember(func(cluster string, _ *member.Client) (*memberStores, func()) {
		ms := &memberStores{running: map[schema.GroupVersionResource]*running{}}
		return ms, func() {
			for gvr, r := range ms.running {
				m.stopStore(storeID{cluster: cluster, gvr: gvr}, r)
			}
		}
	})
	return m
}

// runningStore returns the running store of id. Callers hold m.mu.
func (m *Manager) runningStore(id storeID) (*running, bool) {
	ms, ok := m.members.Get(id.cluster)
	if !ok {
		return nil, false
	}
	r, ok := ms.running[id.gvr]
	return r, ok
}

// eachStore calls f with every running store. Callers hold m.mu.
func (m *Manager) eachStore(f func(id storeID, r *running)) {
	for _, cluster := range m.members.Names() {
		ms, _ := m.members.Get(cluster)
		for gvr, r := range ms.running {
			f(storeID{cluster: cluster, gvr: gvr}, r)
		}
	}
}

type storeID struct {
	cluster string
	gvr     schema.GroupVersionResource
}

// want is what one store should cache.
type want struct {
	kind       string
	namespaced bool
	client     *member.Client
	// namespaces is nil for all namespaces.
	namespaces sets.Set[string]
	registries []string
}

type running struct {
	store  *Store
	cancel context.CancelFunc
	key    string // the namespaces: a change restarts the store
	// allNamespaces: the store holds the resource of every namespace.
	allNamespaces bool
	trigger       func()
	listed        sync.Once
	mu            sync.Mutex
	err           error
}

// setErr records the outcome of the last list or watch and asks for a
// reconciliation (which writes the registries' status) when it changed.
func (r *running) setErr(err error) {
	r.mu.Lock()
	changed := (r.err == nil) != (err == nil) || (err != nil && r.err.Error() != err.Error())
	r.err = err
	r.mu.Unlock()
	if changed {
		r.trigger()
	}
}

func (r *running) lastErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Trigger asks for a reconciliation soon (clusters or registries changed).
func (m *Manager) Trigger() {
	select {
	case m.trigger <- struct{}{}:
	default:
	}
}

// Run reconciles until ctx ends, then stops every store.
func (m *Manager) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("search-cache")
	ctx = klog.NewContext(ctx, logger)
	ticker := time.NewTicker(m.resync)
	defer ticker.Stop()
	for {
		if err := m.sync(ctx); err != nil {
			logger.Error(err, "Reconciling the search cache")
		}
		select {
		case <-ctx.Done():
			m.stopAll()
			return
		case <-m.trigger:
			// Coalesce a burst of changes.
			time.Sleep(100 * time.Millisecond)
		case <-ticker.C:
		}
	}
}

// Stores returns the stores of a resource, in cluster order, and a channel
// closed when that set changes.
func (m *Manager) Stores(gvr schema.GroupVersionResource) ([]*Store, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Store
	m.eachStore(func(id storeID, r *running) {
		if id.gvr == gvr {
			out = append(out, r.store)
		}
	})
	slices.SortFunc(out, func(a, b *Store) int { return strings.Compare(a.Cluster, b.Cluster) })
	ch, ok := m.changed[gvr]
	if !ok {
		ch = make(chan struct{})
		m.changed[gvr] = ch
	}
	return out, ch
}

// KindFor maps a resource to its kind through the discovery of the Ready
// members, in name order; false when none serves it. It asks a member's
// discovery again at most once per member mapper reset, as mappingFor.
func (m *Manager) KindFor(gvr schema.GroupVersionResource) (string, bool) {
	clusters, err := m.clusters()
	if err != nil {
		return "", false
	}
	slices.SortFunc(clusters, func(a, b *clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range clusters {
		if !clusterReady(c) {
			continue
		}
		client, err := m.client(c)
		if err != nil {
			continue
		}
		if gvk, err := client.Mapper.KindFor(gvr); err == nil && gvk.Kind != "" {
			return gvk.Kind, true
		}
	}
	return "", false
}

// AllStores returns every running store, in (resource, cluster) order.
func (m *Manager) AllStores() []*Store {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []*Store
	m.eachStore(func(_ storeID, r *running) { out = append(out, r.store) })
	slices.SortFunc(out, func(a, b *Store) int {
		if c := strings.Compare(a.Resource.String(), b.Resource.String()); c != 0 {
			return c
		}
		return strings.Compare(a.Cluster, b.Cluster)
	})
	return out
}

// sync starts and stops stores to match the registries and clusters, and
// writes the registries' status.
func (m *Manager) sync(ctx context.Context) error {
	clusters, err := m.clusters()
	if err != nil {
		return fmt.Errorf("listing clusters: %w", err)
	}
	registries, err := m.registries()
	if err != nil {
		return fmt.Errorf("listing resource registries: %w", err)
	}
	slices.SortFunc(clusters, func(a, b *clusterv1alpha1.Cluster) int { return strings.Compare(a.Name, b.Name) })
	wants := map[storeID]*want{}
	problems := map[string][]string{} // registry -> what failed
	for _, reg := range registries {
		if reg.DeletionTimestamp != nil {
			continue
		}
		for _, cluster := range clusters {
			if !clusterReady(cluster) || !selectors.ClusterMatches(cluster, &reg.Spec.TargetCluster) {
				continue
			}
			client, err := m.client(cluster)
			if err != nil {
				problems[reg.Name] = append(problems[reg.Name], fmt.Sprintf("%s: %v", cluster.Name, err))
				continue
			}
			for _, sel := range reg.Spec.ResourceSelectors {
				mapping, err := mappingFor(client, sel)
				if err != nil {
					problems[reg.Name] = append(problems[reg.Name], fmt.Sprintf("%s %s in %s: %v", sel.APIVersion, sel.Kind, cluster.Name, err))
					continue
				}
				id := storeID{cluster: cluster.Name, gvr: mapping.Resource}
				w, ok := wants[id]
				if !ok {
					w = &want{kind: mapping.GroupVersionKind.Kind, namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace, client: client, namespaces: sets.New[string]()}
					wants[id] = w
				}
				w.registries = append(w.registries, reg.Name)
				if sel.Namespace == "" || !w.namespaced {
					w.namespaces = nil
				} else if w.namespaces != nil {
					w.namespaces.Insert(sel.Namespace)
				}
			}
		}
	}
	m.apply(ctx, wants)
	return m.writeStatuses(ctx, registries, wants, problems)
}

// mappingFor maps a selector to a resource of the member, asking the
// member's discovery again once when the kind is unknown (a CRD installed
// since).
func mappingFor(client *member.Client, sel searchv1alpha1.ResourceSelector) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(sel.APIVersion)
	if err != nil {
		return nil, err
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: sel.Kind}
	mapping, err := client.Mapper.RESTMapping(gk, gv.Version)
	if meta.IsNoMatchError(err) {
		client.Mapper.Reset()
		mapping, err = client.Mapper.RESTMapping(gk, gv.Version)
	}
	if meta.IsNoMatchError(err) {
		return nil, fmt.Errorf("the cluster does not serve this kind")
	}
	return mapping, err
}

// apply starts the stores wanted and not running (or running with other
// settings, or on another connection of their member) and stops the
// others.
func (m *Manager) apply(ctx context.Context, wants map[storeID]*want) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.logger = klog.FromContext(ctx)
	clients := map[string]*member.Client{}
	for id, w := range wants {
		clients[id.cluster] = w.client
	}
	// The stores of the members no longer cached, or on a new
	// connection, stop with their member's.
	m.members.Sync(clients)
	m.eachStore(func(id storeID, r *running) {
		if w, ok := wants[id]; !ok || r.key != w.key() {
			ms, _ := m.members.Get(id.cluster)
			delete(ms.running, id.gvr)
			m.stopStore(id, r)
		}
	})
	for id, w := range wants {
		ms, _ := m.members.Get(id.cluster)
		if _, ok := ms.running[id.gvr]; ok {
			continue
		}
		ms.running[id.gvr] = m.startStore(ctx, id, w)
	}
	for gvr := range m.touched {
		if ch, ok := m.changed[gvr]; ok {
			close(ch)
			delete(m.changed, gvr)
		}
	}
	m.touched = sets.New[schema.GroupVersionResource]()
}

// startStore starts caching id as w says. Callers hold m.mu.
func (m *Manager) startStore(ctx context.Context, id storeID, w *want) *running {
	store := newStore(id.cluster, id.gvr, w.kind, w.namespaced)
	rctx, cancel := context.WithCancel(ctx)
	r := &running{store: store, cancel: cancel, key: w.key(), trigger: m.Trigger, allNamespaces: w.namespaces == nil}
	ref := &reflector{store: store, index: m.index, setErr: r.setErr, minBackoff: m.minBackoff,
		onListed: func() {
			r.listed.Do(func() {
				m.Trigger()
				if store.Len() >= bulkList {
					m.release.request()
				}
			})
		}}
	if w.namespaced {
		ref.client = w.client.Dynamic.Resource(id.gvr).Namespace(metav1.NamespaceAll)
	} else {
		ref.client = w.client.Dynamic.Resource(id.gvr)
	}
	if w.namespaces != nil {
		ns := w.namespaces
		ref.keepNS = func(n string) bool { return ns.Has(n) }
	}
	m.touched.Insert(id.gvr)
	go ref.run(rctx)
	m.logger.V(2).Info("Started caching", "cluster", id.cluster, "resource", id.gvr.String(), "namespaces", w.namespaces)
	return r
}

// stopStore stops caching id. Callers hold m.mu.
func (m *Manager) stopStore(id storeID, r *running) {
	r.cancel()
	if r.store.Len() >= bulkList {
		// Its objects are garbage now: hand them back to the system.
		m.release.request()
	}
	r.store.stop()
	if m.index != nil {
		m.index.DeleteStore(r.store)
	}
	m.touched.Insert(id.gvr)
	m.logger.V(2).Info("Stopped caching", "cluster", id.cluster, "resource", id.gvr.String())
}

// key is what a store caches beside its member's connection: the
// namespaces.
func (w *want) key() string {
	if w.namespaces == nil {
		return "*"
	}
	return strings.Join(sets.List(w.namespaces), ",")
}

func (m *Manager) stopAll() {
	m.apply(context.Background(), nil)
}

func clusterReady(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
