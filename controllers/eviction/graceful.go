package eviction

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/failover"
)

// GracefulEvictionName is the graceful eviction controller's name in --controllers.
const GracefulEvictionName = "gracefulEviction"

// ReasonGracefulEvictionCompleted is Flotilla's event on the binding when
// a task ends: the old cluster's Work goes, and why now.
const ReasonGracefulEvictionCompleted = "GracefulEvictionCompleted"

// DefaultGracefulEvictionTimeout is Karmada's --graceful-eviction-timeout.
const DefaultGracefulEvictionTimeout = 10 * time.Minute

// GracefulEviction ends the GracefulEvictionTasks of bindings.
type GracefulEviction struct {
	bindings bindings
	synced   []cache.InformerSynced
	// timeout is the grace period of tasks without their own.
	timeout  time.Duration
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]
	now      func() time.Time
	write    func(ctx context.Context, key string, body []byte) error
	// requeue looks at key again after d.
	requeue func(key string, d time.Duration)
}

// NewGracefulEviction returns the controller: a binding with tasks is
// reconsidered when its tasks, clusters or aggregated status change, and
// when the next grace period ends.
func NewGracefulEviction(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	client versioned.Interface, recorder record.EventRecorder, timeout time.Duration) (*GracefulEviction, error) {
	bs := newBindings(rbs, crbs, client)
	c := &GracefulEviction{bindings: bs, synced: bs.synced, timeout: timeout, recorder: recorder,
		queue: worker.NewQueue(GracefulEvictionName), now: time.Now,
		write: func(ctx context.Context, key string, body []byte) error {
			return bs.patch(ctx, key, body, GracefulEvictionName)
		},
	}
	c.requeue = c.queue.AddAfter
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueue,
		UpdateFunc: func(old, cur any) {
			o, ok1 := bindingOf(old)
			n, ok2 := bindingOf(cur)
			if ok1 && ok2 && apiequality.Semantic.DeepEqual(o.spec.GracefulEvictionTasks, n.spec.GracefulEvictionTasks) &&
				apiequality.Semantic.DeepEqual(o.spec.Clusters, n.spec.Clusters) && apiequality.Semantic.DeepEqual(o.status, n.status) {
				return
			}
			c.enqueue(cur)
		},
	}
	if err := onBindings(handler, rbs.Informer(), crbs.Informer()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *GracefulEviction) enqueue(obj any) {
	if b, ok := bindingOf(obj); ok && len(b.spec.GracefulEvictionTasks) > 0 {
		c.queue.Add(b.key())
	}
}

// Run runs the controller until ctx ends.
func (c *GracefulEviction) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *GracefulEviction) reconcile(ctx context.Context, key string) error {
	b, err := c.bindings.get(key)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if b.meta.DeletionTimestamp != nil || len(b.spec.GracefulEvictionTasks) == 0 {
		return nil
	}
	now := c.now()
	in := failover.Binding{Spec: b.spec, Status: b.status, Generation: b.meta.Generation}
	var (
		keep []workv1alpha2.GracefulEvictionTask
		done []string
		next time.Duration
	)
	for i := range b.spec.GracefulEvictionTasks {
		task := &b.spec.GracefulEvictionTasks[i]
		v := failover.AssessTask(task, in, c.timeout, now)
		if v.Done {
			if failover.KeepsWork(task) {
				done = append(done, fmt.Sprintf("Removed the workload from cluster %s: %s.", task.FromCluster, v.Why))
			} else {
				done = append(done, fmt.Sprintf("Ended the eviction from cluster %s (its workload went when it was evicted): %s.", task.FromCluster, v.Why))
			}
			continue
		}
		keep = append(keep, *task)
		if v.After > 0 && (next == 0 || v.After < next) {
			next = v.After
		}
	}
	if next > 0 {
		c.requeue(key, next)
	}
	if len(done) == 0 {
		return nil
	}
	var tasks any // null clears the field
	if len(keep) > 0 {
		tasks = keep
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": b.meta.ResourceVersion},
		"spec":     map[string]any{"gracefulEvictionTasks": tasks},
	})
	if err != nil {
		return err
	}
	if gone, err := writeUnlessGone(ctx, c.write, key, body); gone || err != nil {
		return err
	}
	for _, msg := range done {
		klog.FromContext(ctx).Info("Graceful eviction completed", "binding", key, "message", msg)
		c.recorder.Event(b.obj, corev1.EventTypeNormal, ReasonGracefulEvictionCompleted, msg)
	}
	return nil
}
