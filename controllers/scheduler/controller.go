package scheduler

import (
	"context"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	policyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/policy/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/ownwrites"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/estimator"
	"github.com/flotilla-io/flotilla/estimator/assumed"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/placement"
	"github.com/flotilla-io/flotilla/telemetry"
)

// ControllerName is the name of the scheduler in --controllers, and the
// field manager of its writes.
const ControllerName = "scheduler"

// DefaultSchedulerName is the schedulerName this scheduler serves.
const DefaultSchedulerName = "default-scheduler"

// retryUnschedulable is how long a binding that could not be scheduled
// waits before it is tried again; cluster changes try it at once.
const retryUnschedulable = 30 * time.Second

// Controller is the scheduler.
type Controller struct {
	rbs      worklisters.ResourceBindingLister
	crbs     worklisters.ClusterResourceBindingLister
	clusters clusterlisters.ClusterLister
	// quotas are the FederatedResourceQuotas whose overall limits the
	// scheduler enforces.
	quotas   policylisters.FederatedResourceQuotaLister
	synced   []cache.InformerSynced
	client   versioned.Interface
	recorder record.EventRecorder
	queue    worker.Interface
	now      func() time.Time
	// written remembers the last write of each key: until the lister moves
	// past the version it replaced, the cached binding is stale.
	written ownwrites.Writes[string, struct{}]
	// estimate is the accurate estimator over the members' own nodes, pods
	// and quotas; nil: the clusters' resource summaries only.
	estimate ReplicaEstimator
	// assumed is what the scheduler assigned and the members do not show
	// yet, which estimate takes as used (see assumed.go); nil: nothing.
	assumed *assumed.Cache
	// healthInterpreted says which kinds' health shows their pods run
	// (SetHealthInterpreted); nil: every kind's.
	healthInterpreted func(schema.GroupVersionKind) bool
	// assuming makes deciding and assuming one step (scheduleAssuming).
	assuming sync.Mutex
	// quiet holds the keys queued only by the informers' initial lists (a
	// start or restart): their runs are not stamped when the result is
	// unchanged, so a restart writes nothing. Any other trigger clears it.
	quiet sync.Map
}

// ReplicaEstimator tells how many more replicas with req the member
// cluster can run in namespace once what is assumed there is taken; ok is
// false when it does not know.
type ReplicaEstimator func(cluster, namespace string, req *workv1alpha2.ReplicaRequirements, assumed estimator.Assumed) (n int64, ok bool)

// New returns the scheduler. It writes a binding's result through the
// binding and its status through the status subresource, as any client.
func New(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	clusters clusterinformers.ClusterInformer, quotas policyinformers.FederatedResourceQuotaInformer,
	client versioned.Interface, recorder record.EventRecorder, estimate ReplicaEstimator) (*Controller, error) {
	c := &Controller{
		estimate: estimate,
		rbs:      rbs.Lister(), crbs: crbs.Lister(), clusters: clusters.Lister(), quotas: quotas.Lister(),
		synced: []cache.InformerSynced{rbs.Informer().HasSynced, crbs.Informer().HasSynced, clusters.Informer().HasSynced,
			quotas.Informer().HasSynced},
		client: client, recorder: recorder, now: time.Now,
		assumed: assumed.New(assumed.DefaultTTL, nil),
	}
	// Higher schedulePriority first (Karmada's priority-based scheduling).
	c.queue = worker.NewPriorityQueue(ControllerName, c.priority)
	bindingHandler := cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			telemetry.CountSchedulerQueueIncoming(telemetry.EventBindingAdd)
			c.enqueueBinding(obj, initial)
		},
		UpdateFunc: func(old, cur any) {
			if bindingChanged(bindingOf(old), bindingOf(cur)) {
				telemetry.CountSchedulerQueueIncoming(telemetry.EventBindingUpdate)
				c.enqueueBinding(cur, false)
			}
		},
	}
	for _, inf := range []cache.SharedIndexInformer{rbs.Informer(), crbs.Informer()} {
		if _, err := inf.AddEventHandler(bindingHandler); err != nil {
			return nil, err
		}
	}
	if err := c.watchAssumed(rbs.Informer(), crbs.Informer()); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) { c.enqueueAll(false, initial) },
		UpdateFunc: func(old, cur any) {
			o, n := old.(*clusterv1alpha1.Cluster), cur.(*clusterv1alpha1.Cluster)
			if o.ResourceVersion == n.ResourceVersion {
				return
			}
			// Placement depends on these; capacity changes only retry
			// bindings that could not be scheduled.
			c.enqueueAll(!clusterChanged(o, n), false)
		},
		DeleteFunc: func(any) { c.enqueueAll(false, false) },
	}); err != nil {
		return nil, err
	}
	// A quota raised or removed may let its namespace's waiting bindings
	// through. Its status, rewritten as members report use, changes
	// nothing here.
	retry := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			if ns, _, err := cache.SplitMetaNamespaceKey(key); err == nil {
				c.enqueueUnscheduledIn(ns)
			}
		}
	}
	if _, err := quotas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: retry, DeleteFunc: retry,
		UpdateFunc: func(old, cur any) {
			if old.(*policyv1alpha1.FederatedResourceQuota).Generation != cur.(*policyv1alpha1.FederatedResourceQuota).Generation {
				retry(cur)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run schedules bindings with workers workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// priority is the schedulePriority of the binding of key (0 when it has
// none or is not cached). It is read at every add to the queue: a lister
// lookup, nothing more.
func (c *Controller) priority(key string) int32 {
	t, err := c.lookup(key)
	if err != nil || t.spec.SchedulePriority == nil {
		return 0
	}
	return t.spec.SchedulePriority.Priority
}

// estimator is the accurate estimator for the binding's namespace.
func (c *Controller) estimator(t *target) placement.Estimator {
	if c.estimate == nil {
		return nil
	}
	ns, key := t.spec.Resource.Namespace, names.BindingKey(t.meta.Namespace, t.meta.Name)
	return func(cluster *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) (int64, bool) {
		in := ns
		if req != nil && req.Namespace != "" {
			in = req.Namespace
		}
		return c.estimate(cluster.Name, in, req, c.assumed.For(cluster.Name, in, key))
	}
}

// bindingOf returns the parts of either binding kind the scheduler reads,
// or nil for any other object.
func bindingOf(obj any) *target {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return &target{obj: b, meta: &b.ObjectMeta, spec: &b.Spec, status: &b.Status}
	case *workv1alpha2.ClusterResourceBinding:
		return &target{obj: b, meta: &b.ObjectMeta, spec: &b.Spec, status: &b.Status}
	}
	return nil
}

// bindingChanged tells whether an update may change the decision: a new
// generation (spec), or a scheduler field changed by someone else.
func bindingChanged(old, cur *target) bool {
	if old == nil || cur == nil {
		return true
	}
	return old.meta.Generation != cur.meta.Generation ||
		old.meta.Annotations[workv1alpha2.AppliedPlacementAnnotation] != cur.meta.Annotations[workv1alpha2.AppliedPlacementAnnotation] ||
		cur.status.SchedulerObservedGeneration != cur.meta.Generation
}

// clusterChanged tells whether a cluster update may change placements:
// labels, spec (taints, region...), deletion, or the APIs it serves.
func clusterChanged(old, cur *clusterv1alpha1.Cluster) bool {
	return !reflect.DeepEqual(old.Labels, cur.Labels) || !reflect.DeepEqual(old.Spec, cur.Spec) ||
		(old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) ||
		!reflect.DeepEqual(old.Status.APIEnablements, cur.Status.APIEnablements)
}

func (c *Controller) enqueueBinding(obj any, quiet bool) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		c.add(names.BindingKey(b.Namespace, b.Name), quiet)
	case *workv1alpha2.ClusterResourceBinding:
		c.add(names.BindingKey("", b.Name), quiet)
	}
}

// add queues key; quiet marks a start-up trigger (see Controller.quiet),
// any other clears the mark.
func (c *Controller) add(key string, quiet bool) {
	if quiet {
		// Served after every change (a new leader goes over them all).
		c.quiet.Store(key, struct{}{})
		c.queue.AddInitial(key)
		return
	}
	c.quiet.Delete(key)
	c.queue.Add(key)
}

// enqueueAll queues every binding, or with unscheduledOnly those whose
// last decision failed or which have no decision yet; quiet as add.
func (c *Controller) enqueueAll(unscheduledOnly, quiet bool) {
	keep := func(status *workv1alpha2.ResourceBindingStatus) bool { return !unscheduledOnly || !scheduled(status) }
	rbs, _ := c.rbs.List(labels.Everything())
	for _, b := range rbs {
		if keep(&b.Status) {
			telemetry.CountSchedulerQueueIncoming(telemetry.EventClusterChanged)
			c.add(names.BindingKey(b.Namespace, b.Name), quiet)
		}
	}
	crbs, _ := c.crbs.List(labels.Everything())
	for _, b := range crbs {
		if keep(&b.Status) {
			telemetry.CountSchedulerQueueIncoming(telemetry.EventClusterChanged)
			c.add(names.BindingKey("", b.Name), quiet)
		}
	}
}

// enqueueUnscheduledIn queues the ResourceBindings of namespace that are not
// scheduled (a FederatedResourceQuota there changed).
func (c *Controller) enqueueUnscheduledIn(namespace string) {
	rbs, _ := c.rbs.ResourceBindings(namespace).List(labels.Everything())
	for _, b := range rbs {
		if !scheduled(&b.Status) {
			// A FederatedResourceQuota is a policy of the namespace.
			telemetry.CountSchedulerQueueIncoming(telemetry.EventPolicyChanged)
			c.add(names.BindingKey(b.Namespace, b.Name), false)
		}
	}
}

func scheduled(status *workv1alpha2.ResourceBindingStatus) bool {
	return meta.IsStatusConditionTrue(status.Conditions, workv1alpha2.Scheduled)
}
