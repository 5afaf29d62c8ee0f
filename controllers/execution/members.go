package execution

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/names"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
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

// memberInformers are the dynamic informers of one member client, each
// selecting only objects labelled with a Work permanent id.
type memberInformers struct {
	factory dynamicinformer.DynamicSharedInformerFactory
	cancel  context.CancelFunc
	ctx     context.Context
	byGVR   map[schema.GroupVersionResource]cache.SharedIndexInformer
}

func (i *memberInformers) stop() {
	i.cancel()
	// Shutdown waits for the informers' goroutines; a member that does
	// not answer must not hold up the caller.
	go i.factory.Shutdown()
}

// informer returns the member's informer on gvr, started on first use. The
// informers are rebuilt when the member's client changed (new endpoint or
// credentials). handler receives the events of informers it starts.
func (m *memberState) informer(client *member.Client, gvr schema.GroupVersionResource, handler cache.ResourceEventHandler) (cache.SharedIndexInformer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.informers != nil && m.clientKey != client.Key() {
		m.informers.stop()
		m.informers = nil
	}
	if m.informers == nil {
		ctx, cancel := context.WithCancel(context.Background())
		factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client.Dynamic, 0, metav1.NamespaceAll,
			func(o *metav1.ListOptions) { o.LabelSelector = workv1alpha2.WorkPermanentIDLabel })
		m.informers = &memberInformers{factory: factory, ctx: ctx, cancel: cancel, byGVR: map[schema.GroupVersionResource]cache.SharedIndexInformer{}}
		m.clientKey = client.Key()
	}
	if inf, ok := m.informers.byGVR[gvr]; ok {
		return inf, nil
	}
	inf := m.informers.factory.ForResource(gvr).Informer()
	if _, err := inf.AddEventHandler(handler); err != nil {
		return nil, err
	}
	m.informers.byGVR[gvr] = inf
	m.informers.factory.Start(m.informers.ctx.Done())
	return inf, nil
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
		u, ok := obj.(*unstructured.Unstructured)
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
			o, ok1 := old.(*unstructured.Unstructured)
			c, ok2 := cur.(*unstructured.Unstructured)
			if ok1 && ok2 && o.GetResourceVersion() == c.GetResourceVersion() {
				return
			}
			enqueue(cur)
		},
		DeleteFunc: enqueue,
	}
}
