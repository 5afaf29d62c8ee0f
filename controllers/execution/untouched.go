package execution

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// An object Flotilla takes over without writing it (holdsButOwnMetadata:
// a promoted object, which already holds its template) carries none of
// Flotilla's labels, so the member informers, which select the objects
// labelled with a Work permanent id, do not see it. Each such object is
// watched on its own (a field selector on its name) for as long as it
// stays untouched, so that its status is reflected and a change by
// someone else is undone as for any applied object. Once a change of the
// manifest writes it (labelled then), or its Work goes, the watch stops.
// Such objects are few (promoted ones, until their template changes);
// each costs one watch on the member, and at most maxUntouchedWatches
// are watched per member: beyond that, an untouched object's Work is
// read again every untouchedPoll instead (a GET of the object), until a
// watch is free.

// maxUntouchedWatches bounds the one-object watches per member.
const maxUntouchedWatches = 32

// untouchedPoll is how often the Work of an untouched object that has no
// watch (all maxUntouchedWatches taken) is reconciled again.
const untouchedPoll = 30 * time.Second

// objectKey names one member object.
type objectKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

func keyOf(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) objectKey {
	return objectKey{gvr: gvr, namespace: obj.GetNamespace(), name: obj.GetName()}
}

// objectWatch is the informer on one untouched object.
type objectWatch struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	// work is the key of the Work whose manifest the object holds.
	work string
}

// watchUntouched starts watching obj, untouched and held by the Work
// with key work, unless it is watched for that Work already. Its changes
// enqueue the Work.
func (m *memberState) watchUntouched(client *member.Client, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, work string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.informersFor(client)
	key := keyOf(gvr, obj)
	if w, ok := m.informers.untouched[key]; ok {
		if w.work == work {
			return nil
		}
		w.cancel()
		delete(m.informers.untouched, key)
	}
	if len(m.informers.untouched) >= m.maxUntouched {
		// No watch free: read it again later (the reconcile then asks
		// again, and gets a watch once one is free).
		m.queue.AddAfter(work, m.untouchedPoll)
		return nil
	}
	ri := client.Dynamic.Resource(gvr).Namespace(key.namespace)
	byName := fields.OneTermEqualSelector("metadata.name", key.name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return ri.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(compactObject)
	enqueue := func() { m.queue.Add(work) }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		// The first list finds the object as the reconcile that started
		// the watch saw it: nothing to do.
		AddFunc: func(_ any, initial bool) {
			if !initial {
				enqueue()
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := cachedMeta(old)
			c, ok2 := cachedMeta(cur)
			if ok1 && ok2 && o.GetResourceVersion() == c.GetResourceVersion() {
				return
			}
			enqueue()
		},
		DeleteFunc: func(any) { enqueue() },
	}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(m.informers.ctx)
	m.informers.untouched[key] = &objectWatch{informer: inf, cancel: cancel, work: work}
	go inf.RunWithContext(ctx)
	return nil
}

// unwatchUntouched stops watching the object of gvr named as obj.
func (m *memberState) unwatchUntouched(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.informers == nil {
		return
	}
	key := keyOf(gvr, obj)
	if w, ok := m.informers.untouched[key]; ok {
		w.cancel()
		delete(m.informers.untouched, key)
	}
}

// forgetWork drops what m keeps for work, which goes: the records of its
// writes and the watches of its untouched objects.
func (m *memberState) forgetWork(work *workv1alpha1.Work) {
	m.records.forgetWork(work.UID)
	m.unwatchWork(cache.MetaObjectToName(work).String())
}

// unwatchWork stops watching the untouched objects of the Work with key
// work, which goes.
func (m *memberState) unwatchWork(work string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.informers == nil {
		return
	}
	for key, w := range m.informers.untouched {
		if w.work == work {
			w.cancel()
			delete(m.informers.untouched, key)
		}
	}
}

// untouchedObject returns the object of gvr named as obj from its watch,
// when it is watched, synced and holds it.
func (m *memberState) untouchedObject(gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	m.mu.Lock()
	var inf cache.SharedIndexInformer
	if m.informers != nil {
		if w, ok := m.informers.untouched[keyOf(gvr, obj)]; ok {
			inf = w.informer
		}
	}
	m.mu.Unlock()
	if inf == nil || !inf.HasSynced() {
		return nil, false
	}
	cached, exists, err := inf.GetStore().GetByKey(cache.MetaObjectToName(obj).String())
	if err != nil || !exists {
		return nil, false
	}
	return cachedUnstructured(cached)
}
