package execution

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

// An object Flotilla takes over without writing it (holdsButOwnMetadata:
// a promoted object, which already holds its template) carries none of
// Flotilla's labels, so the member informers, which select the objects
// labelled with a Work permanent id, do not see it. Each such object is
// watched on its own (a field selector on its name, through the member
// hub) for as long as it stays untouched, so that its status is reflected
// and a change by someone else is undone as for any applied object. Once
// a change of the manifest writes it (labelled then), or its Work goes,
// the watch stops.
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

// untouchedWatches are the watches of one member's untouched objects on
// one connection of the member: the hub builds them (empty) when the
// member starts and again when its connection changes, and stops them
// when it stops (member.PerMember). The watches themselves are the hub's
// (member.Hub.WatchObject), and end with that connection.
type untouchedWatches struct {
	cluster string
	// key is the connection's (member.Client.Key).
	key string

	mu      sync.Mutex
	stopped bool
	byKey   map[objectKey]*objectWatch
}

// objectWatch is the watch of one untouched object.
type objectWatch struct {
	watch *member.ObjectWatch
	// work is the key of the Work whose manifest the object holds.
	work string
}

// newUntouched builds the untouched watches of a member's connection;
// stopping them enqueues their Works, which watch their objects again on
// the member's next connection (or find it gone).
func (c *Controller) newUntouched(name string, cl *member.Client) (*untouchedWatches, func()) {
	u := &untouchedWatches{cluster: name, key: cl.Key(), byKey: map[objectKey]*objectWatch{}}
	return u, func() {
		u.mu.Lock()
		u.stopped = true
		watches := u.byKey
		u.byKey = nil
		u.mu.Unlock()
		for _, w := range watches {
			w.watch.Stop()
			c.enqueueAfter(name, w.work, 0)
		}
	}
}

// enqueueAfter enqueues the Work with key work of cluster after delay.
func (c *Controller) enqueueAfter(cluster, work string, delay time.Duration) {
	c.mu.Lock()
	m, ok := c.members[cluster]
	c.mu.Unlock()
	if ok {
		m.queue.AddAfter(work, delay)
	}
}

// watchUntouched starts watching obj, untouched and held by the Work
// with key work, unless it is watched for that Work already. Its changes
// enqueue the Work. While the member's informers do not run, or all
// maxUntouched watches are taken, the Work is read again every
// untouchedPoll instead.
func (c *Controller) watchUntouched(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, work string) error {
	u, ok := c.untouched.Get(cluster)
	if !ok {
		c.enqueueAfter(cluster, work, c.untouchedPoll)
		return nil
	}
	key := keyOf(gvr, obj)
	u.mu.Lock()
	if w, ok := u.byKey[key]; ok {
		if w.work == work {
			u.mu.Unlock()
			return nil
		}
		w.watch.Stop()
		delete(u.byKey, key)
	}
	full := len(u.byKey) >= c.maxUntouched
	u.mu.Unlock()
	if full {
		// No watch free: read it again later (the reconcile then asks
		// again, and gets a watch once one is free).
		c.enqueueAfter(cluster, work, c.untouchedPoll)
		return nil
	}
	// The hub is called without u.mu: it stops u holding its own lock.
	w, ok := c.hub.WatchObject(cluster, u.key, gvr, key.namespace, key.name, untouchedHandler(func() { c.enqueueAfter(cluster, work, 0) }))
	if !ok {
		// A new connection since u was built: u is being replaced.
		c.enqueueAfter(cluster, work, c.untouchedPoll)
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, taken := u.byKey[key]; u.stopped || taken {
		// Stopped meanwhile (its Works are enqueued), or watched by a
		// concurrent reconcile of the same object.
		w.Stop()
		return nil
	}
	u.byKey[key] = &objectWatch{watch: w, work: work}
	return nil
}

// untouchedHandler calls enqueue on every change of an untouched object
// after the first list, which finds it as the reconcile that started the
// watch saw it: nothing to do then.
func untouchedHandler(enqueue func()) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
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
	}
}

// unwatchUntouched stops watching the object of gvr named as obj.
func (c *Controller) unwatchUntouched(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	u, ok := c.untouched.Get(cluster)
	if !ok {
		return
	}
	key := keyOf(gvr, obj)
	u.mu.Lock()
	defer u.mu.Unlock()
	if w, ok := u.byKey[key]; ok {
		w.watch.Stop()
		delete(u.byKey, key)
	}
}

// forgetWork drops what the controller keeps for work of member m, which
// goes: the records of its writes and the watches of its untouched
// objects.
func (c *Controller) forgetWorkOf(m *memberState, work *workv1alpha1.Work) {
	m.records.forgetWork(work.UID)
	c.unwatchWork(m.name, cache.MetaObjectToName(work).String())
}

// unwatchWork stops watching the untouched objects of the Work with key
// work, which goes.
func (c *Controller) unwatchWork(cluster, work string) {
	u, ok := c.untouched.Get(cluster)
	if !ok {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	for key, w := range u.byKey {
		if w.work == work {
			w.watch.Stop()
			delete(u.byKey, key)
		}
	}
}

// untouchedObject returns the object of gvr named as obj from its watch,
// when it is watched, synced and holds it.
func (c *Controller) untouchedObject(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) (*unstructured.Unstructured, bool) {
	u, ok := c.untouched.Get(cluster)
	if !ok {
		return nil, false
	}
	u.mu.Lock()
	w, ok := u.byKey[keyOf(gvr, obj)]
	u.mu.Unlock()
	if !ok {
		return nil, false
	}
	return w.watch.Get()
}
