// Package templates watches the resource templates on the host: one dynamic
// informer per kind that some policy selects, started and stopped as
// policies come and go, shared by the detector and the binding controller.
package templates

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/controllers/internal/trim"
)

// Handler receives the events of every watched kind.
type Handler interface {
	// OnTemplate is called with the template's kind on add, update and
	// delete; old is nil on add, obj is the last known state on delete.
	OnTemplate(gvk schema.GroupVersionKind, old, obj *unstructured.Unstructured, deleted bool)
}

// ListedHandler is a Handler that tells the templates an informer lists
// when it starts (they existed before their kind was watched, or before
// this process started) from the templates created since: it receives the
// former with OnTemplateListed instead of an add.
type ListedHandler interface {
	OnTemplateListed(gvk schema.GroupVersionKind, obj *unstructured.Unstructured)
}

// Informers are the host informers of the watched kinds.
type Informers struct {
	client dynamic.Interface
	mapper meta.ResettableRESTMapper

	mu       sync.RWMutex
	kinds    map[schema.GroupVersionKind]*kindInformer
	handlers []Handler
}

type kindInformer struct {
	gvr      schema.GroupVersionResource
	informer cache.SharedIndexInformer
	stop     context.CancelFunc
}

// New returns informers over client; mapper maps kinds to resources.
func New(client dynamic.Interface, mapper meta.ResettableRESTMapper) *Informers {
	return &Informers{client: client, mapper: mapper, kinds: map[schema.GroupVersionKind]*kindInformer{}}
}

// AddHandler registers h for the events of every kind, present and future.
// Handlers must be added before the first Ensure.
func (i *Informers) AddHandler(h Handler) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.handlers = append(i.handlers, h)
}

// Mapping returns the REST mapping of gvk, refreshing the discovery cache
// once when the kind is unknown (a CRD created a moment ago).
func (i *Informers) Mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := i.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		i.mapper.Reset()
		m, err = i.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	return m, err
}

// Ensure makes sure exactly the kinds in want are watched: informers of new
// kinds are started, those of kinds no longer wanted are stopped. Kinds the
// host does not serve (yet) are returned in missing, to retry later.
func (i *Informers) Ensure(ctx context.Context, want map[schema.GroupVersionKind]bool) (missing []schema.GroupVersionKind) {
	i.mu.Lock()
	defer i.mu.Unlock()
	for gvk, k := range i.kinds {
		if !want[gvk] {
			k.stop()
			delete(i.kinds, gvk)
			klog.FromContext(ctx).Info("Stopped watching templates", "kind", gvk)
		}
	}
	for gvk := range want {
		if _, ok := i.kinds[gvk]; ok {
			continue
		}
		m, err := i.Mapping(gvk)
		if err != nil {
			missing = append(missing, gvk)
			continue
		}
		kctx, cancel := context.WithCancel(ctx)
		inf := dynamicinformer.NewFilteredDynamicInformer(i.client, m.Resource, "", 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
		// Works are built from the templates without their managedFields.
		_ = inf.SetTransform(trim.ManagedFields)
		gvk := gvk
		handlers := append([]Handler(nil), i.handlers...)
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: func(obj any, listed bool) {
				if u, ok := obj.(*unstructured.Unstructured); ok {
					for _, h := range handlers {
						if lh, ok := h.(ListedHandler); ok && listed {
							lh.OnTemplateListed(gvk, u)
							continue
						}
						h.OnTemplate(gvk, nil, u, false)
					}
				}
			},
			UpdateFunc: func(old, obj any) {
				o, ok1 := old.(*unstructured.Unstructured)
				u, ok2 := obj.(*unstructured.Unstructured)
				if ok1 && ok2 {
					for _, h := range handlers {
						h.OnTemplate(gvk, o, u, false)
					}
				}
			},
			DeleteFunc: func(obj any) {
				if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = t.Obj
				}
				if u, ok := obj.(*unstructured.Unstructured); ok {
					for _, h := range handlers {
						h.OnTemplate(gvk, nil, u, true)
					}
				}
			},
		})
		go inf.RunWithContext(kctx)
		i.kinds[gvk] = &kindInformer{gvr: m.Resource, informer: inf, stop: cancel}
		klog.FromContext(ctx).Info("Watching templates", "kind", gvk, "resource", m.Resource)
	}
	return missing
}

// ErrNotWatched is returned by Get for kinds no informer watches.
var ErrNotWatched = fmt.Errorf("kind not watched")

// Get returns the template from the cache of its kind's informer, waiting
// (up to a few seconds) for the informer to sync. The object is shared:
// callers must copy before modifying. Not found is an apierrors NotFound.
func (i *Informers) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	i.mu.RLock()
	k, ok := i.kinds[gvk]
	i.mu.RUnlock()
	if !ok {
		return nil, ErrNotWatched
	}
	if !k.informer.HasSynced() {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if !cache.WaitForCacheSync(wctx.Done(), k.informer.HasSynced) {
			return nil, fmt.Errorf("the informer of %s has not synced", gvk)
		}
	}
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	obj, exists, err := k.informer.GetStore().GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), name)
	}
	return obj.(*unstructured.Unstructured), nil
}

// Synced tells whether the informer of gvk exists and has synced.
func (i *Informers) Synced(gvk schema.GroupVersionKind) bool {
	i.mu.RLock()
	defer i.mu.RUnlock()
	k, ok := i.kinds[gvk]
	return ok && k.informer.HasSynced()
}

// Resource returns the client of gvk's resource.
func (i *Informers) Resource(gvk schema.GroupVersionKind) (dynamic.NamespaceableResourceInterface, *meta.RESTMapping, error) {
	m, err := i.Mapping(gvk)
	if err != nil {
		return nil, nil, err
	}
	return i.client.Resource(m.Resource), m, nil
}

// List returns the cached templates of gvk in namespace ("" = all); nil
// when the kind is not watched. The objects are shared: do not modify.
func (i *Informers) List(gvk schema.GroupVersionKind, namespace string) []*unstructured.Unstructured {
	i.mu.RLock()
	k, ok := i.kinds[gvk]
	i.mu.RUnlock()
	if !ok {
		return nil
	}
	var objs []any
	if namespace == "" {
		objs = k.informer.GetStore().List()
	} else {
		objs, _ = k.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// SpecChanged tells whether a template update is more than a status change
// or a resync: a new generation (or any write, for kinds without one), or
// new labels, annotations or deletion.
func SpecChanged(old, obj *unstructured.Unstructured) bool {
	if old.GetResourceVersion() == obj.GetResourceVersion() {
		return false
	}
	if obj.GetGeneration() == 0 || old.GetGeneration() != obj.GetGeneration() {
		// Kinds without generation (ConfigMaps...) change with every write.
		return true
	}
	return !maps.Equal(old.GetLabels(), obj.GetLabels()) || !maps.Equal(old.GetAnnotations(), obj.GetAnnotations()) ||
		(old.GetDeletionTimestamp() == nil) != (obj.GetDeletionTimestamp() == nil)
}
