package member

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Resource is a kind of member object the hub watches for its readers,
// beside pods, nodes and quotas: one informer per member and resource,
// whatever the number of readers. A resource that is not OnDemand is
// watched in every member whose Cluster lists it among the APIs it serves
// (status.apiEnablements), and stopped when it no longer does; an OnDemand
// one from a reader's first Watch of a member until the member stops. The
// informers hold unstructured objects without their managedFields, read
// from the search cache where a ResourceRegistry caches the resource.
type Resource struct {
	GVR      schema.GroupVersionResource
	OnDemand bool
}

// HandlerFunc returns the handler of the events of one member's informer.
type HandlerFunc func(cluster string) cache.ResourceEventHandler

type registeredResource struct {
	Resource
	handlers []HandlerFunc
}

// resourceInformer is a running informer of a Resource in one member.
type resourceInformer struct {
	informer cache.SharedIndexInformer
	source   *sourceLW
	cancel   context.CancelFunc
}

func (r *resourceInformer) stop() {
	r.cancel()
	r.source.forget()
}

// AddResource registers r, and handler for the events of its informers;
// registering r again adds a handler. The handlers receive each member's
// events from the informer's start (or, for an informer already running,
// from their registration), the objects present as additions, and never
// from a stopped member. Registered while the hub runs, r's informers start
// at the sync it triggers.
func (s *Hub) AddResource(r Resource, handler HandlerFunc) error {
	defer s.Trigger()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resources == nil {
		s.resources = map[schema.GroupVersionResource]*registeredResource{}
	}
	reg, ok := s.resources[r.GVR]
	if !ok {
		reg = &registeredResource{Resource: r}
		s.resources[r.GVR] = reg
	} else if reg.OnDemand != r.OnDemand {
		return fmt.Errorf("resource %s registered both on demand and not", r.GVR)
	}
	reg.handlers = append(reg.handlers, handler)
	for _, m := range s.members {
		if running, ok := m.resources[r.GVR]; ok {
			if _, err := running.informer.AddEventHandler(handler(m.name)); err != nil {
				return err
			}
		}
	}
	return nil
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
	m, ok := s.members[cluster]
	if !ok {
		return nil, false
	}
	r, ok := m.resources[gvr]
	if !ok {
		return nil, false
	}
	return r.informer, true
}

// Watch returns the member's informer of an OnDemand resource, starting it
// on first use; false when the member's informers do not run (it is not
// Ready) or the resource is not registered on demand.
func (s *Hub) Watch(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	if inf, ok := s.Informer(cluster, gvr); ok {
		return inf, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.members[cluster]
	reg, registered := s.resources[gvr]
	if !ok || !registered || !reg.OnDemand {
		return nil, false
	}
	if r, ok := m.resources[gvr]; ok {
		return r.informer, true
	}
	r := s.startResource(m, reg)
	return r.informer, true
}

// syncResources starts, in the running members, the informers of the
// resources their Cluster serves, and stops those of the resources it no
// longer serves. Callers hold s.mu.
func (s *Hub) syncResources(clusters []*clusterv1alpha1.Cluster) {
	if len(s.resources) == 0 {
		return
	}
	byName := make(map[string]*clusterv1alpha1.Cluster, len(clusters))
	for _, c := range clusters {
		byName[c.Name] = c
	}
	for name, m := range s.members {
		c, ok := byName[name]
		if !ok {
			continue
		}
		for gvr, reg := range s.resources {
			if reg.OnDemand {
				continue
			}
			running, ok := m.resources[gvr]
			switch served := Serves(c, gvr); {
			case served && !ok:
				s.startResource(m, reg)
			case !served && ok:
				running.stop()
				delete(m.resources, gvr)
			}
		}
	}
}

// startResource starts the informer of reg in m. Callers hold s.mu.
func (s *Hub) startResource(m *member, reg *registeredResource) *resourceInformer {
	ctx, cancel := context.WithCancel(m.ctx)
	ri := m.client.Dynamic.Resource(reg.GVR).Namespace(metav1.NamespaceAll)
	src := &sourceLW{cluster: m.name, gvr: reg.GVR, shared: s.shared, checkEvery: s.switchCheck,
		newList: func() runtime.Object { return &unstructured.UnstructuredList{} }, decoder: unstructured.UnstructuredJSONScheme,
		member: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return ri.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(ctx, o)
			},
		}}
	inf := cache.NewSharedIndexInformer(src, &unstructured.Unstructured{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = inf.SetTransform(trimUnstructured)
	for _, h := range reg.handlers {
		// Only a started informer refuses handlers; this one is new.
		_, _ = inf.AddEventHandler(h(m.name))
	}
	r := &resourceInformer{informer: inf, source: src, cancel: cancel}
	m.resources[reg.GVR] = r
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
