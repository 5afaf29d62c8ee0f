// Package templates watches the resource templates on the host: one dynamic
// informer per kind that some policy selects, started and stopped as
// policies come and go, shared by the detector and the binding controller.
// A kind defined by a CustomResourceDefinition follows its CRD: when the
// CRD is deleted its templates are deleted, and when it is created again
// (the same kind, maybe other versions) a new informer watches it at once.
package templates

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/member"
)

// Handler receives the events of every watched kind. A template is given
// as the informers hold it: compact, its metadata decoded and the rest as
// JSON (Object decodes it, a new copy at each call). Handlers are not to
// change it.
type Handler interface {
	// OnTemplate is called with the template's kind on add, update and
	// delete; old is nil on add, obj is the last known state on delete.
	OnTemplate(gvk schema.GroupVersionKind, old, obj *member.Compact, deleted bool)
}

// ListedHandler is a Handler that tells the templates an informer lists
// when it starts (they existed before their kind was watched, or before
// this process started) from the templates created since: it receives the
// former with OnTemplateListed instead of an add.
type ListedHandler interface {
	OnTemplateListed(gvk schema.GroupVersionKind, obj *member.Compact)
}

// DefinitionHandler is a Handler told when a CustomResourceDefinition of
// the host changes which kinds it serves (created, deleted, Established,
// a version served or not): it calls Ensure again, so that the kinds it
// wants are watched as they are served now.
type DefinitionHandler interface {
	OnDefinitionChanged()
}

// definitionsSyncTimeout bounds the wait of the first Ensure for the CRD
// informer; past it, kinds are found through discovery alone until it has
// synced.
const definitionsSyncTimeout = 30 * time.Second

// Informers are the host informers of the watched kinds.
type Informers struct {
	client dynamic.Interface
	mapper meta.ResettableRESTMapper
	// definitions is the informer of the host's CRDs, run from the first
	// Ensure on when the host serves them; nil before.
	definitions  atomic.Pointer[cache.SharedIndexInformer]
	definitionMu sync.Mutex

	mu       sync.RWMutex
	kinds    map[schema.GroupVersionKind]*kindInformer
	handlers []Handler
}

// kindInformer is a wanted kind: its informer when the host serves it.
type kindInformer struct {
	gvr schema.GroupVersionResource
	// definition is the UID of the CRD that served the kind when its
	// informer started; empty for a kind no CRD defines.
	definition types.UID
	informer   cache.SharedIndexInformer // nil when the kind is not watched
	stop       context.CancelFunc
	// gone is true when the CRD that stored the kind's templates is
	// deleted and no new one serves it yet: the kind has no templates.
	gone bool
	// waited is true when the host did not serve the kind at an Ensure
	// that wanted it: every template its informer lists is new.
	waited bool
}

func (k *kindInformer) running() bool { return k.informer != nil }

// New returns informers over client; mapper maps kinds to resources.
func New(client dynamic.Interface, mapper meta.ResettableRESTMapper) *Informers {
	return &Informers{client: client, mapper: mapper, kinds: map[schema.GroupVersionKind]*kindInformer{}}
}

// AddHandler registers h for the events of every kind, present and future.
// A handler added while kinds are watched (a standby kept them warm, and
// now takes over) is given each one's templates from memory as listed
// (OnTemplateListed for a ListedHandler), as if their informers had just
// listed them.
func (i *Informers) AddHandler(h Handler) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.handlers = append(i.handlers, h)
	for gvk, k := range i.kinds {
		if k.running() {
			attach(k.informer, gvk, h, false)
		}
	}
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

// runDefinitions starts the CRD informer under ctx, once the host is
// known to serve CRDs, and waits (a while) for its first list.
func (i *Informers) runDefinitions(ctx context.Context) {
	i.definitionMu.Lock()
	defer i.definitionMu.Unlock()
	if i.definitions.Load() != nil {
		return
	}
	m, err := i.mapper.RESTMapping(definitionsKind, apiextensionsv1.SchemeGroupVersion.Version)
	if err != nil {
		// Tried again at the next Ensure; kinds are found through
		// discovery meanwhile.
		return
	}
	inf := newDefinitions(i.client, m.Resource)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, listed bool) {
			if !listed {
				i.definitionChanged()
			}
		},
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*apiextensionsv1.CustomResourceDefinition)
			n, ok2 := obj.(*apiextensionsv1.CustomResourceDefinition)
			if ok1 && ok2 && servingChanged(o, n) {
				i.definitionChanged()
			}
		},
		DeleteFunc: func(any) { i.definitionChanged() },
	})
	go inf.RunWithContext(ctx)
	i.definitions.Store(&inf)
	wctx, cancel := context.WithTimeout(ctx, definitionsSyncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(wctx.Done(), inf.HasSynced) {
		klog.FromContext(ctx).Info("CustomResourceDefinitions not listed yet; kinds are found through discovery meanwhile")
	}
}

// definitionChanged tells the DefinitionHandlers that a CRD changes the
// kinds the host serves.
func (i *Informers) definitionChanged() {
	// Discovery answers with the new versions from now on.
	i.mapper.Reset()
	i.mu.RLock()
	handlers := append([]Handler(nil), i.handlers...)
	i.mu.RUnlock()
	for _, h := range handlers {
		if dh, ok := h.(DefinitionHandler); ok {
			dh.OnDefinitionChanged()
		}
	}
}

// target is how the host serves gvk now: through the CRD that defines it,
// else through discovery.
func (i *Informers) target(gvk schema.GroupVersionKind) target {
	if p := i.definitions.Load(); p != nil && (*p).HasSynced() {
		objs, _ := (*p).GetIndexer().ByIndex(groupKindIndex, gvk.GroupKind().String())
		crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
		for _, o := range objs {
			if crd, ok := o.(*apiextensionsv1.CustomResourceDefinition); ok {
				crds = append(crds, crd)
			}
		}
		if crd := definingOne(crds); crd != nil {
			return definitionTarget(crd, gvk.Version)
		}
	}
	m, err := i.Mapping(gvk)
	switch {
	case meta.IsNoMatchError(err):
		return target{known: true}
	case err != nil:
		return target{}
	}
	return target{known: true, served: true, gvr: m.Resource}
}

// Ensure makes sure exactly the kinds in want are watched, each as the
// host serves it now: informers of new kinds are started, those of kinds
// no longer wanted are stopped, and the informer of a kind whose CRD was
// deleted (and maybe created again) is replaced, its templates deleted.
// Kinds the host does not serve (yet) are returned in missing; a change of
// the CRDs calls the DefinitionHandlers, to call Ensure again.
func (i *Informers) Ensure(ctx context.Context, want map[schema.GroupVersionKind]bool) (missing []schema.GroupVersionKind) {
	i.runDefinitions(ctx)
	log := klog.FromContext(ctx)
	var deleted []forgotten
	defer func() {
		// Handlers are told after the lock is released: they may read
		// the templates.
		for _, f := range deleted {
			for _, h := range f.handlers {
				for _, u := range f.objs {
					h.OnTemplate(f.gvk, nil, u, true)
				}
			}
		}
	}()
	i.mu.Lock()
	defer i.mu.Unlock()
	for gvk, k := range i.kinds {
		if !want[gvk] {
			if k.running() {
				k.stop()
				log.Info("Stopped watching templates", "kind", gvk)
			}
			delete(i.kinds, gvk)
		}
	}
	for gvk := range want {
		// A kindInformer is never changed once stored: readers hold it
		// without the lock.
		k := kindInformer{}
		if old := i.kinds[gvk]; old != nil {
			k = *old
		}
		now := i.target(gvk)
		s := plan(k.running(), k.gvr, k.definition, now)
		if s.forget {
			deleted = append(deleted, forgotten{gvk: gvk, handlers: append([]Handler(nil), i.handlers...), objs: cached(k.informer)})
			k.gone = true
			log.Info("The definition of a kind was deleted, and its templates with it", "kind", gvk)
		}
		if s.stop {
			k.stop()
			k.informer, k.stop = nil, nil
			log.Info("Stopped watching templates", "kind", gvk)
		}
		if s.start {
			i.start(ctx, gvk, &k, now.gvr, k.waited || s.forget)
			k.gone = false
		}
		switch {
		case k.running():
			if now.known {
				k.definition = now.definition
			}
			k.waited = false
		case now.known:
			// Not served: the templates the informer lists once it is
			// are new, unless the CRD keeps them under another version.
			k.waited = !now.elsewhere
		}
		if !k.running() {
			missing = append(missing, gvk)
		}
		i.kinds[gvk] = &k
	}
	return missing
}

// forgotten are the templates of a kind whose CRD is gone.
type forgotten struct {
	gvk      schema.GroupVersionKind
	handlers []Handler
	objs     []*member.Compact
}

// cached returns the objects in inf's store.
func cached(inf cache.SharedIndexInformer) []*member.Compact {
	var out []*member.Compact
	for _, o := range inf.GetStore().List() {
		if c, ok := o.(*member.Compact); ok {
			out = append(out, c)
		}
	}
	return out
}

// start starts the informer of gvk at gvr; with fresh, the templates it
// lists are told as added, not listed: they were all created since the
// kind was wanted.
func (i *Informers) start(ctx context.Context, gvk schema.GroupVersionKind, k *kindInformer, gvr schema.GroupVersionResource, fresh bool) {
	kctx, cancel := context.WithCancel(ctx)
	inf := dynamicinformer.NewFilteredDynamicInformer(i.client, gvr, "", 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	// Templates are kept compact (their metadata without managedFields,
	// the object as JSON): decoded, a Deployment weighs several times its
	// JSON, and every template of a watched kind is held.
	_ = inf.SetTransform(member.CompactAll)
	for _, h := range i.handlers {
		attach(inf, gvk, h, fresh)
	}
	go inf.RunWithContext(kctx)
	k.gvr, k.informer, k.stop = gvr, inf, cancel
	klog.FromContext(ctx).Info("Watching templates", "kind", gvk, "resource", gvr)
}

// attach has inf tell h its events, as templates of gvk; with fresh, the
// templates inf lists are told as added, not listed.
func attach(inf cache.SharedIndexInformer, gvk schema.GroupVersionKind, h Handler, fresh bool) {
	lh, isListed := h.(ListedHandler)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, listed bool) {
			if u, ok := obj.(*member.Compact); ok {
				if isListed && listed && !fresh {
					lh.OnTemplateListed(gvk, u)
					return
				}
				h.OnTemplate(gvk, nil, u, false)
			}
		},
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*member.Compact)
			u, ok2 := obj.(*member.Compact)
			if ok1 && ok2 {
				h.OnTemplate(gvk, o, u, false)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if u, ok := obj.(*member.Compact); ok {
				h.OnTemplate(gvk, nil, u, true)
			}
		},
	})
}

// ErrNotWatched is returned by Get for kinds no informer watches.
var ErrNotWatched = fmt.Errorf("kind not watched")

// kind returns the state of gvk, nil when the kind is not wanted.
func (i *Informers) kind(gvk schema.GroupVersionKind) *kindInformer {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.kinds[gvk]
}

// Get returns the template from the cache of its kind's informer, waiting
// (up to a few seconds) for the informer to sync: decoded from the
// compact form the cache holds, a new object at each call, the caller's
// own. Not found is an apierrors NotFound,
// also for every template of a kind whose CRD was deleted.
func (i *Informers) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	k := i.kind(gvk)
	switch {
	case k != nil && k.gone:
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), name)
	case k == nil || !k.running():
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
	c, ok := obj.(*member.Compact)
	if !ok {
		return nil, fmt.Errorf("the cache of %s holds a %T", gvk, obj)
	}
	return c.Object()
}

// Synced tells whether the informer of gvk exists and has synced.
func (i *Informers) Synced(gvk schema.GroupVersionKind) bool {
	k := i.kind(gvk)
	return k != nil && k.running() && k.informer.HasSynced()
}

// Resource returns the client of gvk's resource.
func (i *Informers) Resource(gvk schema.GroupVersionKind) (dynamic.NamespaceableResourceInterface, *meta.RESTMapping, error) {
	m, err := i.Mapping(gvk)
	if err != nil {
		return nil, nil, err
	}
	return i.client.Resource(m.Resource), m, nil
}

// List returns the cached templates of gvk in namespace ("" = all), as the
// cache holds them (compact: Object decodes one); nil when the kind is
// not watched. The objects are shared: do not modify.
func (i *Informers) List(gvk schema.GroupVersionKind, namespace string) []*member.Compact {
	k := i.kind(gvk)
	if k == nil || !k.running() {
		return nil
	}
	var objs []any
	if namespace == "" {
		objs = k.informer.GetStore().List()
	} else {
		objs, _ = k.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	}
	out := make([]*member.Compact, 0, len(objs))
	for _, o := range objs {
		if c, ok := o.(*member.Compact); ok {
			out = append(out, c)
		}
	}
	return out
}

// SpecChanged tells whether a template update is more than a status change
// or a resync: a new generation (or any write, for kinds without one), or
// new labels, annotations or deletion.
func SpecChanged(old, obj metav1.Object) bool {
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

// Ref refers to a template, for the events recorded on it.
func Ref(obj *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
		Name: obj.GetName(), UID: obj.GetUID()}
}
