package execution

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// memberState is what the controller keeps for one member cluster: a queue of
// the keys of its Works with workers of their own, and the records of the
// last writes. What depends on the member's connection (the watches of
// its objects) is the member hub's.
type memberState struct {
	name    string
	queue   worker.Interface
	records *records

	// cancel stops the workers; done is closed when they have returned.
	// Both are nil until the workers start.
	cancel context.CancelFunc
	done   chan struct{}
}

func newMember(name string) *memberState {
	return &memberState{name: name, queue: worker.NewQueue(ControllerName + "-" + name), records: newRecords()}
}

// start runs workers reconciling the member's queue until ctx ends.
func (m *memberState) start(ctx context.Context, workers int, reconcile func(context.Context, *memberState, string) error) {
	ctx, m.cancel = context.WithCancel(ctx)
	m.done = make(chan struct{})
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("cluster", m.name))
	go func() {
		defer close(m.done)
		worker.Run(ctx, m.queue, nil, workers, func(ctx context.Context, key string) error { return reconcile(ctx, m, key) })
	}()
}

// stop stops the workers and waits for them.
func (m *memberState) stop() {
	if m.cancel == nil {
		m.queue.ShutDown()
		return
	}
	m.cancel()
	<-m.done
}

// appliedSelector selects the objects Flotilla applied (a Work permanent id).
var appliedSelector = func() labels.Selector {
	s, err := labels.Parse(workv1alpha2.WorkPermanentIDLabel)
	if err != nil {
		panic(err)
	}
	return s
}()

// appliedResource is how the controller registers with the member hub a
// kind it applies: watched in a member from the first object applied
// there, only the objects labelled with a Work permanent id, held compact
// with the Work's annotations, which memberEventHandler reads.
func appliedResource(gvr schema.GroupVersionResource) member.Resource {
	return member.Resource{GVR: gvr, OnDemand: true, Selector: appliedSelector, Compact: true,
		Annotations: []string{workv1alpha2.WorkNamespaceAnnotation, workv1alpha2.WorkNameAnnotation}}
}

// memberInformer returns the hub's informer of gvr in cluster, registering
// the kind with the hub on first use: the hub starts it in the member on
// first use, and again whenever the member starts (a new connection, Ready
// again). False while the member's informers do not run.
func (c *Controller) memberInformer(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool) {
	if err := c.handle(gvr); err != nil {
		return nil, false
	}
	return c.hub.Watch(cluster, gvr)
}

// handle registers the controller's handler of gvr's member informers
// once, until the controller stops.
func (c *Controller) handle(gvr schema.GroupVersionResource) error {
	c.handledMu.Lock()
	defer c.handledMu.Unlock()
	if c.handled.Has(gvr) {
		return nil
	}
	if err := c.hub.Handle(c.hubCtx, appliedResource(gvr), c.memberHandler); err != nil {
		return err
	}
	c.handled.Insert(gvr)
	return nil
}

// memberHandler handles the events of one member's informers: it enqueues
// the Works whose objects changed, when this controller applies the
// member's Works.
func (c *Controller) memberHandler(cluster string) cache.ResourceEventHandler {
	return memberEventHandler(cluster, func(key string) {
		if c.serves(cluster) {
			c.member(cluster).queue.Add(key)
		}
	})
}

// applied reports whether what a member informer holds is an object
// Flotilla applied: an informer another reader of the kind shares holds
// every object.
func applied(obj any) bool {
	m, ok := cachedMeta(obj)
	return ok && appliedSelector.Matches(labels.Set(m.GetLabels()))
}

// waitSynced waits up to timeout for inf's first list.
func waitSynced(ctx context.Context, inf cache.SharedIndexInformer, timeout time.Duration) bool {
	if inf.HasSynced() {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
}

// memberEventHandler enqueues the key of the Work an object applied to
// cluster belongs to (annotations work.karmada.io/namespace and /name),
// whatever happened to it: a change of status is reflected, a change by
// someone else or a deletion is undone.
func memberEventHandler(cluster string, enqueue func(key string)) cache.ResourceEventHandler {
	enqueueObj := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := cachedMeta(obj)
		if !ok {
			return
		}
		a := u.GetAnnotations()
		ns, name := a[workv1alpha2.WorkNamespaceAnnotation], a[workv1alpha2.WorkNameAnnotation]
		if name == "" || ns != names.ExecutionNamespace(cluster) {
			return
		}
		enqueue(ns + "/" + name)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueObj,
		UpdateFunc: func(old, cur any) {
			o, ok1 := cachedMeta(old)
			c, ok2 := cachedMeta(cur)
			if ok1 && ok2 && o.GetResourceVersion() == c.GetResourceVersion() {
				return
			}
			enqueueObj(cur)
		},
		DeleteFunc: enqueueObj,
	}
}
