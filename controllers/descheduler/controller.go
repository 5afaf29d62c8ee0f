package descheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
)

// ControllerName is the name of the controller in --controllers. It is
// off unless named there (Karmada's descheduler is a component of its own,
// installed only when asked for).
const ControllerName = "descheduler"

// FieldManager owns the writes of the controller.
const FieldManager = "flotilla-descheduler"

// Events, Karmada's, recorded on the binding and on its template.
const (
	EventReasonDescheduleBindingSucceed = "DescheduleBindingSucceed"
	EventReasonDescheduleBindingFailed  = "DescheduleBindingFailed"
)

// Options are Karmada's karmada-descheduler flags.
type Options struct {
	// DeschedulingInterval is how often the bindings are looked at
	// (--descheduling-interval).
	DeschedulingInterval time.Duration
	// UnschedulableThreshold is how long a pod must have been
	// unschedulable before its replica is taken off its cluster
	// (--unschedulable-threshold).
	UnschedulableThreshold time.Duration
}

// DefaultOptions are Karmada's defaults: every 2 minutes, pods
// unschedulable for 5 minutes.
func DefaultOptions() Options {
	return Options{DeschedulingInterval: 2 * time.Minute, UnschedulableThreshold: 5 * time.Minute}
}

// memberTimeout bounds the read of a member Deployment, so an unreachable
// member holds a worker no longer than this.
const memberTimeout = 10 * time.Second

// Controller deschedules bindings. Its queue holds ResourceBinding keys,
// filled every DeschedulingInterval.
type Controller struct {
	opts     Options
	bindings worklisters.ResourceBindingLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]

	// The sub-reconcilers, in the order reconcile runs them.
	measure measureReconciler
	write   writeReconciler
}

// New returns the controller over the ResourceBindings and Clusters of
// the control plane; members are the member informers (pods) and clients
// (the member Deployment) of the process.
func New(opts Options, rbs workinformers.ResourceBindingInformer, clusters clusterinformers.ClusterInformer, client versioned.Interface,
	members *member.Hub, recorder record.EventRecorder) (*Controller, error) {
	if opts.DeschedulingInterval <= 0 || opts.UnschedulableThreshold < 0 {
		return nil, fmt.Errorf("descheduling interval %v must be positive and unschedulable threshold %v not negative",
			opts.DeschedulingInterval, opts.UnschedulableThreshold)
	}
	clusterLister := clusters.Lister()
	c := &Controller{
		opts: opts, bindings: rbs.Lister(),
		synced: []cache.InformerSynced{rbs.Informer().HasSynced, clusters.Informer().HasSynced},
		queue:  worker.NewQueue(ControllerName),
		measure: measureReconciler{
			clusterReady: func(name string) bool {
				cl, err := clusterLister.Get(name)
				return err == nil && cl.DeletionTimestamp == nil && meta.IsStatusConditionTrue(cl.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
			},
			selector:  memberSelector(members),
			pods:      hubPods(members),
			now:       time.Now,
			threshold: opts.UnschedulableThreshold,
		},
		write: writeReconciler{
			patch: func(ctx context.Context, namespace, name string, body []byte) error {
				_, err := client.WorkV1alpha2().ResourceBindings(namespace).Patch(ctx, name, types.MergePatchType, body,
					metav1.PatchOptions{FieldManager: FieldManager})
				return err
			},
			record: recorder.Event,
		},
	}
	return c, nil
}

// errPodsUnknown: the member's pod informer is not running or has not
// listed.
var errPodsUnknown = errors.New("member pods unknown")

// hubPods lists a member's pods of a namespace from the hub's informers.
func hubPods(hub *member.Hub) func(cluster, namespace string) ([]*member.Pod, error) {
	return func(cluster, namespace string) ([]*member.Pod, error) {
		m, ok := hub.Member(cluster)
		if !ok || !m.Synced {
			return nil, errPodsUnknown
		}
		return m.Pods(namespace, labels.Everything())
	}
}

// memberSelector reads the member Deployment's spec.selector, the pods it
// owns (through its ReplicaSets): Karmada's estimator reads the workload
// in the member too.
func memberSelector(hub *member.Hub) func(ctx context.Context, cluster, namespace, name string) (labels.Selector, error) {
	return func(ctx context.Context, cluster, namespace, name string) (labels.Selector, error) {
		m, ok := hub.Member(cluster)
		if !ok || m.Client == nil {
			return nil, errPodsUnknown
		}
		ctx, cancel := context.WithTimeout(ctx, memberTimeout)
		defer cancel()
		d, err := m.Client.Clientset.AppsV1().Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return deploymentSelector(d.Spec.Selector)
	}
}

// deploymentSelector is a Deployment's selector; an empty or missing one,
// which would select every pod, is refused.
func deploymentSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil || (len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0) {
		return nil, errors.New("the member Deployment has no selector")
	}
	return metav1.LabelSelectorAsSelector(s)
}

// Run deschedules until ctx ends: every DeschedulingInterval the bindings
// that may be descheduled are queued, and workers reconcile them.
func (c *Controller) Run(ctx context.Context, workers int) {
	go func() {
		if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
			return
		}
		wait.UntilWithContext(ctx, c.enqueueCandidates, c.opts.DeschedulingInterval)
	}()
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// enqueueCandidates queues the ResourceBindings that may be descheduled.
func (c *Controller) enqueueCandidates(ctx context.Context) {
	rbs, err := c.bindings.List(labels.Everything())
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing ResourceBindings")
		return
	}
	for _, rb := range rbs {
		if candidate(rb) {
			c.queue.Add(rb.Namespace + "/" + rb.Name)
		}
	}
}

// reconcile deschedules one binding, read from the cache.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	rb, err := c.bindings.ResourceBindings(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if !candidate(rb) {
		return nil
	}
	measured := c.measure.reconcile(ctx, rb, lacking(rb))
	return c.write.reconcile(ctx, rb, measured)
}
