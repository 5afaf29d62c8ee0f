package eviction

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
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
	// Unhealthy in each cluster. The binding records it too
	// (flotillav1alpha1.UnhealthySinceAnnotation), which is where a new
	// leader reads it from (Karmada keeps it in memory only, so its new
	// leader counts a whole toleration again); this is the record written
	// last, before the binding's cache has it.
	mu        sync.Mutex
	unhealthy map[string]map[string]time.Time
	// written is, per binding, the record this controller wrote last.
	written map[string]string
}

// NewApplicationFailover returns the controller: a binding with an
// application failover is reconsidered when its clusters or aggregated
// status change, and when a toleration ends.
func NewApplicationFailover(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	client versioned.Interface, recorder record.EventRecorder, timeout time.Duration) (*ApplicationFailover, error) {
	bs := newBindings(rbs, crbs, client)
	c := &ApplicationFailover{bindings: bs, synced: bs.synced, recorder: recorder, timeout: timeout,
		queue: worker.NewQueue(ApplicationFailoverName), now: time.Now, unhealthy: map[string]map[string]time.Time{}, written: map[string]string{},
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
				c.forget(b.key())
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
		c.forget(key)
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
	recorded := b.meta.Annotations[flotillav1alpha1.UnhealthySinceAnnotation]
	c.mu.Lock()
	since, ok := c.unhealthy[key]
	if !ok {
		since = failover.ParseUnhealthySince(recorded)
	}
	evict, next, after := failover.ApplicationEvictions(b.spec.Clusters, b.status.AggregatedStatus, since, toleration, now)
	for _, e := range evict {
		delete(next, e.Cluster) // it leaves the cluster: the count there ends
	}
	c.unhealthy[key] = next
	record := failover.FormatUnhealthySince(next)
	// Unchanged when the binding says so, or when this controller wrote
	// it already and the cache has not caught up.
	unchanged := record == recorded || (ok && record == c.written[key])
	c.mu.Unlock()
	if after > 0 {
		c.requeue(key, after)
	}
	var annotation any = record
	if record == "" {
		annotation = nil
	}
	if len(evict) == 0 {
		if unchanged {
			return nil
		}
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{flotillav1alpha1.UnhealthySinceAnnotation: annotation}}})
		if err != nil {
			return err
		}
		if gone, err := writeUnlessGone(ctx, c.write, key, body); gone || err != nil {
			return err
		}
		c.wrote(key, record)
		return nil
	}
	opts := taskOptions{mode: app.PurgeMode, reason: workv1alpha2.EvictionReasonApplicationFailure,
		producer: workv1alpha2.EvictionProducerApplicationFailover, grace: app.GracePeriodSeconds, timeout: c.timeout,
		preserve: app.StatePreservation, always: true}
	if record != recorded {
		opts.annotations = map[string]any{flotillav1alpha1.UnhealthySinceAnnotation: annotation}
	}
	if err := writeEviction(ctx, c.write, c.recorder, b, evict, opts, now); err != nil {
		return err
	}
	c.wrote(key, record)
	return nil
}

// wrote notes the record written on the binding of key.
func (c *ApplicationFailover) wrote(key, record string) {
	c.mu.Lock()
	c.written[key] = record
	c.mu.Unlock()
}

// forget drops what is kept of a binding that is gone.
func (c *ApplicationFailover) forget(key string) {
	c.mu.Lock()
	delete(c.unhealthy, key)
	delete(c.written, key)
	c.mu.Unlock()
}
