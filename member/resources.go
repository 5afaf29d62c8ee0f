package member

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Resource is a kind of member object the hub watches for its readers,
// beside pods, nodes and quotas: one informer per member and resource,
// whatever the number of readers. A resource one reader registered not
// OnDemand is watched in every member whose Cluster lists it among the
// APIs it serves (status.apiEnablements), and stopped when it no longer
// does; any registered resource is also watched in a member from a
// reader's first Watch of it there, and again whenever the member starts,
// until its Cluster goes. The informers hold objects without their
// managedFields, read from the search cache where a ResourceRegistry
// caches the resource.
type Resource struct {
	GVR      schema.GroupVersionResource
	OnDemand bool
	// Selector, when not empty, selects the objects the reader reads (the
	// execution controller: those labelled with a Work permanent id). Its
	// handlers receive those alone, an object that stops matching as a
	// deletion, as from a watch with that selector. The informer selects
	// them in the member when every reader of the resource has the same
	// selector; otherwise it holds every object, and a reader of its store
	// skips those its selector does not match.
	Selector labels.Selector
	// Compact, when set, says the reader takes the informer's objects as
	// *Compact (it reads them with Unstructured): when every reader of the
	// resource does, the informer holds them so, with the labels the
	// readers' selectors read and the Annotations they name; otherwise it
	// holds *unstructured.Unstructured.
	Compact     bool
	Annotations []string
}

// HandlerFunc returns the handler of the events of one member's informer.
type HandlerFunc func(cluster string) cache.ResourceEventHandler

// registration is one reader's Resource and handler.
type registration struct {
	Resource
	handler HandlerFunc
}

type registeredResource struct {
	gvr  schema.GroupVersionResource
	regs []*registration
}

// informerSettings are how the informers of a resource are built, from
// what all its readers registered.
type informerSettings struct {
	// always: watched in every member that serves it.
	always bool
	// selector selects the objects in the member (nil: every object).
	selector labels.Selector
	// compact, when not nil, is how objects are held (nil: unstructured).
	compact *compactor
}

// key identifies the settings an informer was built with: when a new
// reader changes them, the informers are built again.
func (st informerSettings) key() string {
	sel, compact := "*", "-"
	if st.selector != nil {
		sel = st.selector.String()
	}
	if st.compact != nil {
		compact = strings.Join(st.compact.labels, ",") + ";" + strings.Join(st.compact.annotations, ",")
	}
	return sel + "\x00" + compact
}

func (r *registeredResource) settings() informerSettings {
	var st informerSettings
	compact := true
	labelKeys, annotations := sets.New[string](), sets.New[string]()
	for i, reg := range r.regs {
		st.always = st.always || !reg.OnDemand
		compact = compact && reg.Compact
		annotations.Insert(reg.Annotations...)
		sel := reg.Selector
		if sel != nil && sel.Empty() {
			sel = nil
		}
		if sel != nil {
			reqs, _ := sel.Requirements()
			for _, req := range reqs {
				labelKeys.Insert(req.Key())
			}
		}
		switch {
		case i == 0:
			st.selector = sel
		case sel == nil || st.selector == nil || sel.String() != st.selector.String():
			st.selector = nil
		}
	}
	if compact && len(r.regs) > 0 {
		st.compact = &compactor{labels: sets.List(labelKeys), annotations: sets.List(annotations)}
	}
	return st
}

// resourceInformer is a running informer of a Resource in one member.
type resourceInformer struct {
	informer cache.SharedIndexInformer
	source   *sourceLW
	cancel   context.CancelFunc
	settings string
	handlers map[*registration]cache.ResourceEventHandlerRegistration
}

func (r *resourceInformer) stop() {
	r.cancel()
	r.source.forget()
}

// AddResource registers r, and handler for the events of its informers,
// for the life of the process; registering r again adds a handler. The
// handlers receive each member's events from the informer's start (or,
// for an informer already running, from their registration), the objects
// present as additions, and never from a stopped member. Registered while
// the hub runs, r's informers start at the sync it triggers. A reader
// that changes how the informers are built (a wider Selector, objects
// that are not Compact) has them built again.
func (s *Hub) AddResource(r Resource, handler HandlerFunc) error {
	return s.Handle(context.Background(), r, handler)
}

// Handle is AddResource for a reader that stops (a controller that loses
// its lease): its handler is removed when ctx ends, and the resource's
// informers stop once no reader is left.
func (s *Hub) Handle(ctx context.Context, r Resource, handler HandlerFunc) error {
	defer s.Trigger()
	reg := &registration{Resource: r, handler: handler}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resources == nil {
		s.resources = map[schema.GroupVersionResource]*registeredResource{}
	}
	res, ok := s.resources[r.GVR]
	if !ok {
		res = &registeredResource{gvr: r.GVR}
		s.resources[r.GVR] = res
	}
	res.regs = append(res.regs, reg)
	settings := res.settings()
	for _, m := range s.members.Values() {
		running, ok := m.resources[r.GVR]
		if !ok {
			continue
		}
		if running.settings != settings.key() {
			running.stop()
			s.startResource(m, res)
			continue
		}
		h, err := running.informer.AddEventHandler(reg.handlerFor(m.name, settings))
		if err != nil {
			return err
		}
		running.handlers[reg] = h
	}
	if ctx.Done() != nil {
		go func() {
			<-ctx.Done()
			s.removeHandler(res, reg)
		}()
	}
	return nil
}

// removeHandler removes a reader's handler; the informers of a resource
// left without readers stop.
func (s *Hub) removeHandler(res *registeredResource, reg *registration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res.regs = slices.DeleteFunc(res.regs, func(r *registration) bool { return r == reg })
	for _, m := range s.members.Values() {
		running, ok := m.resources[res.gvr]
		if !ok {
			continue
		}
		if len(res.regs) == 0 {
			running.stop()
			delete(m.resources, res.gvr)
			continue
		}
		if h, ok := running.handlers[reg]; ok {
			_ = running.informer.RemoveEventHandler(h)
			delete(running.handlers, reg)
		}
	}
	if len(res.regs) == 0 && s.resources[res.gvr] == res {
		delete(s.resources, res.gvr)
	}
}

// handlerFor is the reader's handler of cluster's informer, built with
// settings: it passes on only what the reader's selector matches when the
// informer holds more.
func (reg *registration) handlerFor(cluster string, settings informerSettings) cache.ResourceEventHandler {
	h := reg.handler(cluster)
	sel := reg.Selector
	if sel == nil || sel.Empty() || (settings.selector != nil && settings.selector.String() == sel.String()) {
		return h
	}
	return cache.FilteringResourceEventHandler{Handler: h, FilterFunc: func(obj any) bool {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, err := meta.Accessor(obj)
		return err == nil && sel.Matches(labels.Set(m.GetLabels()))
	}}
}

// Serves tells whether the Cluster lists gvr among the APIs its member
// serves.
func Serves(c *clusterv1alpha1.Cluster, gvr schema.GroupVersionResource) bool {
	gv := gvr.GroupVersion().String()
	for _, e := range c.Status.APIEnablements {
		if e.GroupVersion != gv {
			continue
		}
		for _, r := range e.Resources {
			if r.Name == gvr.Resource {
				return true
			}
		}
	}
	return false
}

// Informer returns the member's informer of a registered resource, when it
// runs. Readers read its store; they add no handlers (AddResource does).
func (s *Hub) Informer(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.members.Get(cluster)
	if !ok {
		return nil, false
	}
	r, ok := m.resources[gvr]
	if !ok {
		return nil, false
	}
	return r.informer, true
}

// Watch returns the member's informer of a registered resource, starting
// it on first use; the hub starts it again whenever the member starts,
// until its Cluster goes. False when the resource is not registered, or
// when the member's informers do not run (it is not Ready): the informer
// starts with them then.
func (s *Hub) Watch(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	s.mu.RLock()
	if m, ok := s.members.Get(cluster); ok && s.asked[cluster].Has(gvr) {
		if r, ok := m.resources[gvr]; ok {
			s.mu.RUnlock()
			return r.informer, true
		}
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	reg, registered := s.resources[gvr]
	if !registered {
		return nil, false
	}
	if s.asked[cluster] == nil {
		s.asked[cluster] = sets.New[schema.GroupVersionResource]()
	}
	s.asked[cluster].Insert(gvr)
	m, ok := s.members.Get(cluster)
	if !ok {
		return nil, false
	}
	if r, ok := m.resources[gvr]; ok {
		return r.informer, true
	}
	return s.startResource(m, reg).informer, true
}

// forgetAsked forgets what readers asked for in members whose Cluster is
// gone. Callers hold s.mu.
func (s *Hub) forgetAsked(clusters []*clusterv1alpha1.Cluster) {
	names := sets.New[string]()
	for _, c := range clusters {
		names.Insert(c.Name)
	}
	for name := range s.asked {
		if !names.Has(name) {
			delete(s.asked, name)
		}
	}
}

// syncResources starts, in the running members, the informers of the
// resources their Cluster serves, and stops those of the resources it no
// longer serves that no reader asked for there. Callers hold s.mu.
func (s *Hub) syncResources(clusters []*clusterv1alpha1.Cluster) {
	if len(s.resources) == 0 {
		return
	}
	byName := make(map[string]*clusterv1alpha1.Cluster, len(clusters))
	for _, c := range clusters {
		byName[c.Name] = c
	}
	always := make(map[schema.GroupVersionResource]bool, len(s.resources))
	for gvr, reg := range s.resources {
		always[gvr] = reg.settings().always
	}
	for _, m := range s.members.Values() {
		c, ok := byName[m.name]
		if !ok {
			continue
		}
		for gvr, reg := range s.resources {
			running, ok := m.resources[gvr]
			switch wanted := s.asked[m.name].Has(gvr) || (always[gvr] && Serves(c, gvr)); {
			case wanted && !ok:
				s.startResource(m, reg)
			case !wanted && ok:
				running.stop()
				delete(m.resources, gvr)
			}
		}
	}
}

// startResource starts the informer of res in m. Callers hold s.mu.
func (s *Hub) startResource(m *member, res *registeredResource) *resourceInformer {
	settings := res.settings()
	ctx, cancel := context.WithCancel(m.ctx)
	ri := m.client.Dynamic.Resource(res.gvr).Namespace(metav1.NamespaceAll)
	var selector string
	if settings.selector != nil {
		selector = settings.selector.String()
	}
	src := &sourceLW{cluster: m.name, gvr: res.gvr, shared: s.shared, checkEvery: s.switchCheck, selector: settings.selector,
		newList: func() runtime.Object { return &unstructured.UnstructuredList{} }, decoder: unstructured.UnstructuredJSONScheme,
		member: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				o.LabelSelector = selector
				return ri.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				o.LabelSelector = selector
				return ri.Watch(ctx, o)
			},
		}}
	inf := cache.NewSharedIndexInformer(src, &unstructured.Unstructured{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if settings.compact != nil {
		_ = inf.SetTransform(settings.compact.transform)
	} else {
		_ = inf.SetTransform(trimUnstructured)
	}
	r := &resourceInformer{informer: inf, source: src, cancel: cancel, settings: settings.key(),
		handlers: map[*registration]cache.ResourceEventHandlerRegistration{}}
	for _, reg := range res.regs {
		// Only a started informer refuses handlers; this one is new.
		r.handlers[reg], _ = inf.AddEventHandler(reg.handlerFor(m.name, settings))
	}
	m.resources[res.gvr] = r
	go inf.RunWithContext(ctx)
	return r
}

// trimUnstructured drops what no reader of the hub's resources reads: the
// managed fields, and the search cache's mark on the objects it holds.
func trimUnstructured(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.SetManagedFields(nil)
		return unmark(u), nil
	}
	return obj, nil
}
