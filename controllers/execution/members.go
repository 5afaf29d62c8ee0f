package execution

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// memberState is what the controller keeps for one member cluster: a queue of
// the keys of its Works with workers of their own, the records of the last
// writes, and informers on the objects applied there.
type memberState struct {
	name    string
	queue   workqueue.TypedRateLimitingInterface[string]
	records *records

	// cancel stops the workers; done is closed when they have returned.
	// Both are nil until the workers start.
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// informers watch the objects applied to the member, built from the
	// client with key clientKey; nil until a Work needs one.
	informers *memberInformers
	clientKey string
	// maxUntouched bounds the one-object watches of untouched objects;
	// untouchedPoll is how often one beyond the bound is read again.
	maxUntouched  int
	untouchedPoll time.Duration
}

func newMember(name string) *memberState {
	return &memberState{name: name, queue: worker.NewQueue(ControllerName + "-" + name), records: newRecords(),
		maxUntouched: maxUntouchedWatches, untouchedPoll: untouchedPoll}
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

// stop stops the workers and the informers and waits for the workers.
func (m *memberState) stop() {
	if m.cancel == nil {
		m.queue.ShutDown()
	} else {
		m.cancel()
		<-m.done
	}
	m.mu.Lock()
	inf := m.informers
	m.informers = nil
	m.mu.Unlock()
	if inf != nil {
		inf.stop()
	}
}

// memberInformers are the informers of one member client, each selecting
// only objects labelled with a Work permanent id.
type memberInformers struct {
	cancel context.CancelFunc
	ctx    context.Context
	byGVR  map[schema.GroupVersionResource]cache.SharedIndexInformer
	// untouched watch, one by one, the objects Flotilla took over without
	// writing them (untouched.go): no label selects them.
	untouched map[objectKey]*objectWatch
}

func (i *memberInformers) stop() { i.cancel() }

// appliedSelector selects the objects Flotilla applied (a Work permanent id).
var appliedSelector = func() labels.Selector {
	s, err := labels.Parse(workv1alpha2.WorkPermanentIDLabel)
	if err != nil {
		panic(err)
	}
	return s
}()

// informer returns the member's informer on gvr, started on first use. The
// informers are rebuilt when the member's client changed (new endpoint or
// credentials). handler receives the events of informers it starts.
func (m *memberState) informer(client *member.Client, shared member.Shared, gvr schema.GroupVersionResource, handler cache.ResourceEventHandler) (cache.SharedIndexInformer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.informersFor(client)
	if inf, ok := m.informers.byGVR[gvr]; ok {
		return inf, nil
	}
	ri := client.Dynamic.Resource(gvr).Namespace(metav1.NamespaceAll)
	fromMember := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = appliedSelector.String()
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = appliedSelector.String()
			return ri.Watch(ctx, o)
		},
	}
	// Where the search cache holds the resource, it is read from there:
	// one watch per resource and member in the process.
	lw := member.NewSource(m.name, gvr, shared, fromMember, func() runtime.Object { return &unstructured.UnstructuredList{} },
		unstructured.UnstructuredJSONScheme, appliedSelector)
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(compactObject)
	if _, err := inf.AddEventHandler(handler); err != nil {
		return nil, err
	}
	m.informers.byGVR[gvr] = inf
	go inf.RunWithContext(m.informers.ctx)
	return inf, nil
}

// informersFor makes m.informers those of client, rebuilt when the
// member's client changed (new endpoint or credentials). m.mu is held.
func (m *memberState) informersFor(client *member.Client) {
	if m.informers != nil && m.clientKey != client.Key() {
		m.informers.stop()
		m.informers = nil
	}
	if m.informers == nil {
		ctx, cancel := context.WithCancel(context.Background())
		m.informers = &memberInformers{ctx: ctx, cancel: cancel, byGVR: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
			untouched: map[objectKey]*objectWatch{}}
		m.clientKey = client.Key()
	}
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

// memberEventHandler enqueues the Work an object applied to m belongs to
// (annotations work.karmada.io/namespace and /name), whatever happened to
// it: a change of status is reflected, a change by someone else or a
// deletion is undone.
func memberEventHandler(m *memberState) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := cachedMeta(obj)
		if !ok {
			return
		}
		a := u.GetAnnotations()
		ns, name := a[workv1alpha2.WorkNamespaceAnnotation], a[workv1alpha2.WorkNameAnnotation]
		if name == "" || ns != names.ExecutionNamespace(m.name) {
			return
		}
		m.queue.Add(ns + "/" + name)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			o, ok1 := cachedMeta(old)
			c, ok2 := cachedMeta(cur)
			if ok1 && ok2 && o.GetResourceVersion() == c.GetResourceVersion() {
				return
			}
			enqueue(cur)
		},
		DeleteFunc: enqueue,
	}
}
