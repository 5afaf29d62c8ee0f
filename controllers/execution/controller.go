package execution

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of this controller in --controllers, and the
// field manager of its writes.
const ControllerName = "execution"

// Options tune the controller. Zero values take the defaults.
type Options struct {
	// Workers is the number of Works of one member reconciled at once.
	// Default 8.
	Workers int
	// NotReadyRetry is how long a Work of a member that is not Ready waits
	// before it is tried again; it is also tried as soon as the member
	// becomes Ready. Default 30s.
	NotReadyRetry time.Duration
	// CacheSyncTimeout bounds the wait for the first list of a member
	// informer; past it, member objects are read with a GET. Default 30s.
	CacheSyncTimeout time.Duration
	// Agent, when set, is the cluster of the flotilla-agent this
	// controller runs in: it applies that cluster's Works (a pull cluster)
	// and no other's. Empty: the control plane's controller, which
	// applies the Works of push clusters.
	Agent string
}

func (o *Options) complete() {
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.NotReadyRetry <= 0 {
		o.NotReadyRetry = 30 * time.Second
	}
	if o.CacheSyncTimeout <= 0 {
		o.CacheSyncTimeout = 30 * time.Second
	}
}

// Hub is what the controller uses of the member hub (member.Hub): the
// informers of the kinds it applied in each member, the watches of the
// objects it took over untouched, and the state it keeps per connection
// of a member.
type Hub interface {
	Handle(ctx context.Context, r member.Resource, handler member.HandlerFunc) error
	Watch(cluster string, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, bool)
	WatchObject(cluster, key string, gvr schema.GroupVersionResource, namespace, name string, handler cache.ResourceEventHandler) (*member.ObjectWatch, bool)
	Register(ctx context.Context, p member.Registrant)
}

var _ Hub = (*member.Hub)(nil)

// Controller applies the Works of push clusters to their members and
// writes the Works' status.
type Controller struct {
	works    worklisters.WorkLister
	clusters clusterlisters.ClusterLister
	synced   []cache.InformerSynced
	// memberClient returns the client of a member (member.Cache.Get).
	memberClient func(*clusterv1alpha1.Cluster) (*member.Client, error)
	opts         Options

	// hub watches the objects applied to the members. The kinds in
	// handled have the controller's handler, registered until hubCtx
	// ends; untouched are the watches of the objects taken over
	// untouched, per member connection, of at most maxUntouched objects
	// per member (beyond, their Works are read again every untouchedPoll).
	hub           Hub
	hubCtx        context.Context
	handledMu     sync.Mutex
	handled       sets.Set[schema.GroupVersionResource]
	untouched     *member.PerMember[*untouchedWatches]
	maxUntouched  int
	untouchedPoll time.Duration

	// The sub-reconcilers that need no member (reconcile.go); retain is
	// the interpreter's Retain, for applyReconciler.
	finalizer finalizerReconciler
	dispatch  dispatchReconciler
	manifests manifestsReconciler
	status    statusReconciler
	events    eventsReconciler
	retain    func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error)

	mu sync.Mutex
	// members holds one entry per member with Works or a Cluster.
	members map[string]*memberState
	// runCtx is the context of Run once the caches have synced; members
	// created before wait for it to start their workers.
	runCtx  context.Context
	stopped bool
}

// New returns the controller. works and clusters are informers of
// flotilla-apiserver's loopback clientset client; members builds member
// clients; hub watches member objects (the process's member hub, run by
// its owner); recorder records events on Works and on resource templates.
func New(works workinformers.WorkInformer, clusters clusterinformers.ClusterInformer, client versioned.Interface,
	members *member.Cache, hub Hub, interp interpreter.Interpreter, recorder record.EventRecorder, opts Options) (*Controller, error) {
	opts.complete()
	c := &Controller{
		works:         works.Lister(),
		clusters:      clusters.Lister(),
		synced:        []cache.InformerSynced{works.Informer().HasSynced, clusters.Informer().HasSynced},
		opts:          opts,
		members:       map[string]*memberState{},
		hub:           hub,
		hubCtx:        context.Background(),
		handled:       sets.New[schema.GroupVersionResource](),
		maxUntouched:  maxUntouchedWatches,
		untouchedPoll: untouchedPoll,
	}
	if members != nil {
		c.memberClient = members.Get
	}
	c.untouched = member.NewPerMember(c.newUntouched)
	c.setReconcilers(client, interp, recorder)
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: c.enqueueWork,
		UpdateFunc: func(old, cur any) {
			if workChanged(old.(*workv1alpha1.Work), cur.(*workv1alpha1.Work)) {
				c.enqueueWork(cur, false)
			}
		},
		DeleteFunc: c.forgetWork,
	}); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.member(obj.(*clusterv1alpha1.Cluster).Name) },
		UpdateFunc: func(old, cur any) {
			if clusterWoke(old.(*clusterv1alpha1.Cluster), cur.(*clusterv1alpha1.Cluster)) {
				c.enqueueClusterWorks(cur.(*clusterv1alpha1.Cluster).Name)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if cl, ok := obj.(*clusterv1alpha1.Cluster); ok {
				c.dropMember(cl.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run waits for the caches, then reconciles every member's Works with
// Options.Workers workers each, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return
	}
	c.useHub(ctx)
	c.mu.Lock()
	c.runCtx = ctx
	for _, m := range c.members {
		m.start(ctx, c.opts.Workers, c.reconcile)
	}
	c.mu.Unlock()

	<-ctx.Done()
	c.mu.Lock()
	c.stopped = true
	members := c.members
	c.members = map[string]*memberState{}
	c.mu.Unlock()
	for _, m := range members {
		m.stop()
	}
}

// useHub registers the controller's per-member state with the hub, and
// its handlers from now on, until ctx ends.
func (c *Controller) useHub(ctx context.Context) {
	c.handledMu.Lock()
	c.hubCtx = ctx
	c.handledMu.Unlock()
	c.hub.Register(ctx, c.untouched)
}

// member returns the state of a member, created (and started, once Run
// runs) on first use.
func (c *Controller) member(name string) *memberState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.members[name]; ok {
		return m
	}
	m := newMember(name)
	if c.stopped {
		m.queue.ShutDown()
		return m
	}
	c.members[name] = m
	if c.runCtx != nil {
		m.start(c.runCtx, c.opts.Workers, c.reconcile)
	}
	return m
}

// dropMember stops the workers of a member that is gone (the hub stops
// the watches of its objects).
func (c *Controller) dropMember(name string) {
	c.mu.Lock()
	m, ok := c.members[name]
	delete(c.members, name)
	c.mu.Unlock()
	if ok {
		// Waiting for the workers must not block the informer's handler.
		go m.stop()
	}
}

// clusterOfWork returns the member a Work is for, from its namespace.
func clusterOfWork(namespace string) (string, bool) {
	cluster, ok := strings.CutPrefix(namespace, names.ExecutionNamespacePrefix)
	return cluster, ok && cluster != ""
}

// enqueueWork queues a Work; initial: met in the informer's initial list,
// served after the others (worker.Queue.AddInitial).
func (c *Controller) enqueueWork(obj any, initial bool) {
	w, ok := obj.(*workv1alpha1.Work)
	if !ok {
		return
	}
	cluster, ok := clusterOfWork(w.Namespace)
	if !ok {
		return
	}
	if !c.serves(cluster) {
		return
	}
	if initial {
		c.member(cluster).queue.AddInitial(w.Namespace + "/" + w.Name)
		return
	}
	c.member(cluster).queue.Add(w.Namespace + "/" + w.Name)
}

// serves tells whether this controller applies the Works of cluster: the
// agent's own cluster in an agent, push clusters on the control plane (the
// agent of a pull cluster applies its Works itself).
func (c *Controller) serves(cluster string) bool {
	if c.opts.Agent != "" {
		return cluster == c.opts.Agent
	}
	cl, err := c.clusters.Get(cluster)
	return err != nil || cl.Spec.SyncMode != clusterv1alpha1.Pull
}

// enqueueClusterWorks enqueues every Work of a member.
func (c *Controller) enqueueClusterWorks(cluster string) {
	works, err := c.works.Works(names.ExecutionNamespace(cluster)).List(labels.Everything())
	if err != nil {
		return
	}
	for _, w := range works {
		c.enqueueWork(w, false)
	}
}

// forgetWork drops the records of a deleted Work.
func (c *Controller) forgetWork(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	w, ok := obj.(*workv1alpha1.Work)
	if !ok {
		return
	}
	if cluster, ok := clusterOfWork(w.Namespace); ok {
		c.mu.Lock()
		m := c.members[cluster]
		c.mu.Unlock()
		if m != nil {
			c.forgetWorkOf(m, w)
		}
	}
}

// workChanged tells whether an update of a Work needs reconciling: its
// spec, labels, finalizers or deletion changed. Status updates (the
// controller's own) do not.
func workChanged(old, cur *workv1alpha1.Work) bool {
	return old.Generation != cur.Generation ||
		(old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) ||
		!maps.Equal(old.Labels, cur.Labels) ||
		!slices.Equal(old.Finalizers, cur.Finalizers)
}

// clusterWoke tells whether the Works of a cluster should be tried again
// now: it became Ready, or the way to reach it changed.
func clusterWoke(old, cur *clusterv1alpha1.Cluster) bool {
	return (!clusterReady(old) && clusterReady(cur)) ||
		old.Spec.SyncMode != cur.Spec.SyncMode ||
		old.Spec.APIEndpoint != cur.Spec.APIEndpoint ||
		old.Spec.ProxyURL != cur.Spec.ProxyURL ||
		!equalRefs(old.Spec.SecretRef, cur.Spec.SecretRef)
}

func equalRefs(a, b *clusterv1alpha1.LocalSecretReference) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func clusterReady(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
