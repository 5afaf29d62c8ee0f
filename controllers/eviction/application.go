package eviction

import (
	"context"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/failover"
)

// ApplicationFailoverName is the application failover controller's name
// in --controllers (Karmada's applicationFailover).
const ApplicationFailoverName = "applicationFailover"

// ApplicationFailover evicts a binding from the clusters where its
// workload has been unhealthy longer than its policy's
// failover.application tolerates, preserving state as its rules say.
type ApplicationFailover struct {
	bindings bindings
	synced   []cache.InformerSynced
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]
	now      func() time.Time
	write    func(ctx context.Context, key string, body []byte) error
	requeue  func(key string, d time.Duration)
	// timeout is the graceful eviction controller's, for the messages of
	// the tasks.
	timeout time.Duration

	// unhealthy is, per binding, when its workload was first seen
	// Unhealthy in each cluster (kept in memory, as Karmada does: a new
	// leader counts the toleration from when it first sees it).
	mu        sync.Mutex
	unhealthy map[string]map[string]time.Time
}

// NewApplicationFailover returns the controller: a binding with an
// application failover is reconsidered when its clusters or aggregated
// status change, and when a toleration ends.
func NewApplicationFailover(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	client versioned.Interface, recorder record.EventRecorder, timeout time.Duration) (*ApplicationFailover, error) {
	bs := newBindings(rbs, crbs, client)
	c := &ApplicationFailover{bindings: bs, synced: bs.synced, recorder: recorder, timeout: timeout,
		queue: worker.NewQueue(ApplicationFailoverName), now: time.Now, unhealthy: map[string]map[string]time.Time{},
		write: func(ctx context.Context, key string, body []byte) error {
			return bs.patch(ctx, key, body, ApplicationFailoverName)
		},
	}
	c.requeue = c.queue.AddAfter
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, cur any) {
			o, ok1 := bindingOf(old)
			n, ok2 := bindingOf(cur)
			if ok1 && ok2 && apiequality.Semantic.DeepEqual(o.spec.Clusters, n.spec.Clusters) &&
				apiequality.Semantic.DeepEqual(o.status.AggregatedStatus, n.status.AggregatedStatus) &&
				apiequality.Semantic.DeepEqual(o.spec.Failover, n.spec.Failover) {
				return
			}
			c.enqueue(cur)
		},
		DeleteFunc: func(obj any) {
			if b, ok := bindingOf(obj); ok {
				c.mu.Lock()
				delete(c.unhealthy, b.key())
				c.mu.Unlock()
			}
		},
	}
	if err := onBindings(handler, rbs.Informer(), crbs.Informer()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *ApplicationFailover) enqueue(obj any) {
	if b, ok := bindingOf(obj); ok && b.spec.Failover != nil && b.spec.Failover.Application != nil {
		c.queue.Add(b.key())
	}
}

// Run runs the controller until ctx ends.
func (c *ApplicationFailover) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *ApplicationFailover) reconcile(ctx context.Context, key string) error {
	b, err := c.bindings.get(key)
	if apierrors.IsNotFound(err) {
		c.mu.Lock()
		delete(c.unhealthy, key)
		c.mu.Unlock()
		return nil
	} else if err != nil {
		return err
	}
	if b.meta.DeletionTimestamp != nil || b.spec.Failover == nil || b.spec.Failover.Application == nil {
		return nil
	}
	app := b.spec.Failover.Application
	toleration := failover.DefaultApplicationToleration
	if ts := app.DecisionConditions.TolerationSeconds; ts != nil {
		toleration = time.Duration(*ts) * time.Second
	}
	now := c.now()
	c.mu.Lock()
	evict, since, after := failover.ApplicationEvictions(b.spec.Clusters, b.status.AggregatedStatus, c.unhealthy[key], toleration, now)
	c.unhealthy[key] = since
	c.mu.Unlock()
	if after > 0 {
		c.requeue(key, after)
	}
	if len(evict) == 0 {
		return nil
	}
	return writeEviction(ctx, c.write, c.recorder, b, evict, taskOptions{mode: app.PurgeMode, reason: workv1alpha2.EvictionReasonApplicationFailure,
		producer: workv1alpha2.EvictionProducerApplicationFailover, grace: app.GracePeriodSeconds, timeout: c.timeout,
		preserve: app.StatePreservation, always: true}, now)
}
