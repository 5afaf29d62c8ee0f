package eviction

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/failover"
)

// TaintManagerName is the taint manager's name in --controllers.
const TaintManagerName = "taintManager"

// Event reasons on the binding (docs/compatibility.md, Events).
const (
	ReasonEvictWorkloadFromClusterSucceed = "EvictWorkloadFromClusterSucceed"
	ReasonEvictWorkloadFromClusterFailed  = "EvictWorkloadFromClusterFailed"
	// ReasonEvictionPaused is Flotilla's: an eviction due is held back by
	// the partition safety valve.
	ReasonEvictionPaused = "EvictionPaused"
)

// TaintOptions tune the taint manager (Karmada's flag names).
type TaintOptions struct {
	// PurgeMode is how a binding leaves a cluster when its policy's
	// failover.cluster does not say (--no-execute-taint-eviction-purge-mode).
	PurgeMode policyv1alpha1.PurgeMode
	// UnhealthyClusterThreshold is the share of not Ready clusters above
	// which evictions pause (--unhealthy-cluster-threshold).
	UnhealthyClusterThreshold float64
	// EvictionRate is how many bindings may be evicted per second, with a
	// burst of as many (--resource-eviction-rate).
	EvictionRate float64
	// UnhealthyClusterWindow is how long a cluster must have been not
	// Ready before evictions from it start, so that the other clusters of
	// a partition show as not Ready first (--unhealthy-cluster-window).
	UnhealthyClusterWindow time.Duration
	// GracefulEvictionTimeout is the graceful eviction controller's
	// timeout, for the messages of the tasks (--graceful-eviction-timeout).
	GracefulEvictionTimeout time.Duration
}

// TaintManager evicts bindings from clusters with NoExecute taints they
// do not tolerate.
type TaintManager struct {
	bindings bindings
	clusters clusterlisters.ClusterLister
	synced   []cache.InformerSynced
	opts     TaintOptions
	limiter  *rate.Limiter
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]
	now      func() time.Time
	// write patches the binding of key.
	write func(ctx context.Context, key string, body []byte) error
	// writeStatus patches the status of the binding of key.
	writeStatus func(ctx context.Context, key string, body []byte) error
	// requeue looks at key again after d.
	requeue func(key string, d time.Duration)

	// quietUntil holds evictions back: until a window after the last
	// partition was seen (its members come back one by one, and their
	// NoExecute taints go only once each is Ready again), and a window
	// after the taint manager started (a new leader's caches settle).
	mu         sync.Mutex
	quietUntil time.Time
}

// quiet returns how long evictions are still held back after a
// partition, or after the start.
func (c *TaintManager) quiet(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.quietUntil.Sub(now)
}

// partitioned holds evictions back for a window from now.
func (c *TaintManager) partitioned(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if end := now.Add(c.opts.UnhealthyClusterWindow); end.After(c.quietUntil) {
		c.quietUntil = end
	}
}

// newLimiter allows rate evictions per second, in bursts of as many.
func newLimiter(perSecond float64) *rate.Limiter {
	return rate.NewLimiter(rate.Limit(perSecond), max(int(perSecond), 1))
}

// NewTaintManager returns the taint manager: a binding is reconsidered
// when its clusters or tolerations change, and every binding of a cluster
// when the cluster's NoExecute taints or readiness change.
func NewTaintManager(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer, clusters clusterinformers.ClusterInformer,
	client versioned.Interface, recorder record.EventRecorder, opts TaintOptions) (*TaintManager, error) {
	bs := newBindings(rbs, crbs, client)
	c := &TaintManager{
		bindings: bs, clusters: clusters.Lister(), opts: opts,
		synced:   append([]cache.InformerSynced{clusters.Informer().HasSynced}, bs.synced...),
		limiter:  newLimiter(opts.EvictionRate),
		recorder: recorder, queue: worker.NewQueue(TaintManagerName), now: time.Now,
		write: func(ctx context.Context, key string, body []byte) error {
			return bs.patch(ctx, key, body, TaintManagerName)
		},
		writeStatus: func(ctx context.Context, key string, body []byte) error {
			return bs.patch(ctx, key, body, TaintManagerName, "status")
		},
	}
	c.requeue = c.queue.AddAfter
	c.partitioned(c.now())
	if err := addClusterIndex(rbs.Informer(), crbs.Informer()); err != nil {
		return nil, err
	}
	onBinding := cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueBinding,
		UpdateFunc: func(old, cur any) {
			o, ok1 := bindingOf(old)
			n, ok2 := bindingOf(cur)
			if ok1 && ok2 && apiequality.Semantic.DeepEqual(o.spec.Clusters, n.spec.Clusters) &&
				apiequality.Semantic.DeepEqual(tolerations(o.spec), tolerations(n.spec)) {
				return
			}
			c.enqueueBinding(cur)
		},
	}
	if err := onBindings(onBinding, rbs.Informer(), crbs.Informer()); err != nil {
		return nil, err
	}
	indexers := []cache.Indexer{rbs.Informer().GetIndexer(), crbs.Informer().GetIndexer()}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, n := old.(*clusterv1alpha1.Cluster), cur.(*clusterv1alpha1.Cluster)
			if ready(o) != ready(n) {
				// The valve sees every change of readiness, not only
				// those of clusters with bindings due.
				if all, err := c.clusters.List(labels.Everything()); err == nil {
					if paused, _ := failover.Partitioned(all, c.opts.UnhealthyClusterThreshold); paused {
						c.partitioned(c.now())
					}
				}
			}
			if apiequality.Semantic.DeepEqual(noExecute(o), noExecute(n)) && ready(o) == ready(n) {
				return
			}
			for _, idx := range indexers {
				objs, _ := idx.ByIndex(byCluster, n.Name)
				for _, obj := range objs {
					c.enqueueBinding(obj)
				}
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *TaintManager) enqueueBinding(obj any) {
	if b, ok := bindingOf(obj); ok && (len(b.spec.Clusters) > 0 || pausedCondition(b)) {
		c.queue.Add(b.key())
	}
}

// pausedCondition tells whether the binding's EvictionPaused condition is True.
func pausedCondition(b *binding) bool {
	return meta.IsStatusConditionTrue(b.status.Conditions, workv1alpha2.EvictionPaused)
}

// syncPaused writes the binding's EvictionPaused condition: True with why
// while paused, False once no longer (only if it was True: a binding never
// paused has no such condition). Nothing is written when it is current.
func (c *TaintManager) syncPaused(ctx context.Context, b *binding, paused bool, why string) error {
	cond := metav1.Condition{Type: workv1alpha2.EvictionPaused, Status: metav1.ConditionTrue,
		Reason: workv1alpha2.EvictionPausedReasonClustersNotReady, Message: why, ObservedGeneration: b.meta.Generation}
	cur := meta.FindStatusCondition(b.status.Conditions, workv1alpha2.EvictionPaused)
	if !paused {
		if cur == nil || cur.Status != metav1.ConditionTrue {
			return nil
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha2.EvictionPausedReasonResumed, "Evictions resumed: enough clusters are Ready."
	} else if cur != nil && cur.Status == cond.Status && cur.Message == cond.Message {
		return nil
	}
	conditions := slices.Clone(b.status.Conditions)
	cond.LastTransitionTime = metav1.NewTime(c.now())
	meta.SetStatusCondition(&conditions, cond)
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": b.meta.ResourceVersion},
		"status":   map[string]any{"conditions": conditions},
	})
	if err != nil {
		return err
	}
	if err := c.writeStatus(ctx, b.key(), body); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// Run runs the taint manager until ctx ends.
func (c *TaintManager) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *TaintManager) reconcile(ctx context.Context, key string) error {
	b, err := c.bindings.get(key)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if b.meta.DeletionTimestamp != nil {
		return nil
	}
	if len(b.spec.Clusters) == 0 {
		return c.syncPaused(ctx, b, false, "")
	}
	all, err := c.clusters.List(labels.Everything())
	if err != nil {
		return err
	}
	byName := make(map[string]*clusterv1alpha1.Cluster, len(all))
	for _, cl := range all {
		byName[cl.Name] = cl
	}
	now := c.now()
	due, after := failover.NoExecuteEvictions(b.spec.Clusters, tolerations(b.spec), byName, now)
	var evict []failover.Eviction
	for _, e := range due {
		if wait := failover.Settling(byName[e.Cluster], c.opts.UnhealthyClusterWindow, now); wait > 0 {
			klog.FromContext(ctx).V(2).Info("Eviction waits for the cluster's failure to settle", "binding", key, "cluster", e.Cluster, "wait", wait)
			if after == 0 || wait < after {
				after = wait
			}
			continue
		}
		evict = append(evict, e)
	}
	if after > 0 {
		c.requeue(key, after)
	}
	if len(evict) == 0 {
		// Nothing due (any more): a pause of this binding is over.
		return c.syncPaused(ctx, b, false, "")
	}
	if paused, why := failover.Partitioned(all, c.opts.UnhealthyClusterThreshold); paused {
		c.partitioned(now)
		c.recorder.Event(b.obj, corev1.EventTypeWarning, ReasonEvictionPaused, why)
		klog.FromContext(ctx).Info("Eviction paused", "binding", key, "why", why)
		c.requeue(key, pauseRecheck)
		return c.syncPaused(ctx, b, true, why)
	}
	if wait := c.quiet(now); wait > 0 {
		klog.FromContext(ctx).V(2).Info("Eviction waits after a partition or the start", "binding", key, "wait", wait)
		c.requeue(key, wait)
		return nil
	}
	if r := c.limiter.ReserveN(now, 1); r.DelayFrom(now) > 0 {
		r.CancelAt(now)
		c.requeue(key, r.DelayFrom(now))
		return nil
	}
	opts := taskOptions{mode: c.purgeMode(b.spec), reason: workv1alpha2.EvictionReasonTaintUntolerated, producer: workv1alpha2.EvictionProducerTaintManager,
		timeout: c.opts.GracefulEvictionTimeout}
	if f := b.spec.Failover; f != nil && f.Cluster != nil {
		opts.preserve = f.Cluster.StatePreservation
	}
	return writeEviction(ctx, c.write, c.recorder, b, evict, opts, now)
}

// pauseRecheck is how often a paused eviction looks again.
const pauseRecheck = 5 * time.Second

// purgeMode is the binding's failover.cluster purge mode, else the flag's.
func (c *TaintManager) purgeMode(spec *workv1alpha2.ResourceBindingSpec) policyv1alpha1.PurgeMode {
	if spec.Failover != nil && spec.Failover.Cluster != nil && spec.Failover.Cluster.PurgeMode != "" {
		return spec.Failover.Cluster.PurgeMode
	}
	return c.opts.PurgeMode
}

func tolerations(spec *workv1alpha2.ResourceBindingSpec) []corev1.Toleration {
	if spec.Placement == nil {
		return nil
	}
	return spec.Placement.ClusterTolerations
}

func noExecute(c *clusterv1alpha1.Cluster) []corev1.Taint { return failover.NoExecuteTaints(c) }

func ready(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
