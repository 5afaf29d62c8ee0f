// Package federatedhpa is the FederatedHPA controller: the Kubernetes HPA
// algorithm (package podautoscaler) over the pods of every member a template
// is placed on, with metrics read through the control plane's
// metrics.k8s.io and custom.metrics.k8s.io. It scales the template's
// `scale` subresource on the host; the scheduler then divides the new
// replica count over the members.
package federatedhpa

import (
	"context"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	autoscalinginformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/autoscaling/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	autoscalinglisters "github.com/flotilla-io/flotilla/apis/generated/listers/autoscaling/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "federatedHPA"

// FieldManager owns the status the controller writes.
const FieldManager = "flotilla-federatedhpa"

// Options tune the controller like kube-controller-manager's HPA flags.
type Options struct {
	// SyncPeriod is how often each FederatedHPA is computed.
	SyncPeriod time.Duration
	// Algorithm holds tolerance, CPU initialization period, readiness
	// delay and downscale stabilization.
	Algorithm podautoscaler.Config
}

// Controller computes FederatedHPAs.
type Controller struct {
	opts   Options
	fhpas  autoscalinglisters.FederatedHPALister
	synced []cache.InformerSynced
	now    func() time.Time
	queue  workqueue.TypedRateLimitingInterface[string]

	// The sub-reconcilers, in the order reconcile runs them
	// (reconcile.go).
	scale     scaleReconciler
	pods      podsReconciler
	metrics   metricsReconciler
	recommend *recommendReconciler
	rescale   rescaleReconciler
	events    eventsReconciler
	status    statusReconciler
}

// New returns the controller. members are the member pod informers;
// metrics reads the control plane's metrics APIs.
func New(opts Options, fhpas autoscalinginformers.FederatedHPAInformer, bindings workinformers.ResourceBindingInformer,
	client versioned.Interface, scales scale.ScalesGetter, mapper meta.RESTMapper, members *member.Hub,
	metrics MetricsSource, recorder record.EventRecorder) (*Controller, error) {
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = 15 * time.Second
	}
	c := &Controller{opts: opts, fhpas: fhpas.Lister(),
		synced: []cache.InformerSynced{fhpas.Informer().HasSynced, bindings.Informer().HasSynced},
		now:    time.Now, queue: worker.NewQueue(ControllerName)}
	c.setReconcilers(bindings.Lister(), client, scales, mapper, members, metrics, recorder)
	enqueue := worker.EnqueueKey(c.queue)
	if _, err := fhpas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			// Status writes (ours) change nothing to compute; the periodic
			// sync picks up everything else.
			if old.(*autoscalingv1alpha1.FederatedHPA).Generation != cur.(*autoscalingv1alpha1.FederatedHPA).Generation {
				enqueue(cur)
			}
		},
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// setReconcilers builds the sub-reconcilers over the host's clients and
// listers, the member hub and the metrics source.
func (c *Controller) setReconcilers(bindings worklisters.ResourceBindingLister, client versioned.Interface, scales scale.ScalesGetter,
	mapper meta.RESTMapper, members *member.Hub, metrics MetricsSource, recorder record.EventRecorder) {
	c.scale = scaleReconciler{
		restMapping: mapper.RESTMapping,
		get: func(ctx context.Context, namespace string, resource schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
			return scales.Scales(namespace).Get(ctx, resource, name, metav1.GetOptions{})
		},
	}
	c.pods = podsReconciler{
		binding: func(namespace, name string) (*workv1alpha2.ResourceBinding, error) {
			return bindings.ResourceBindings(namespace).Get(name)
		},
		memberPods: hubPods(members),
	}
	c.metrics = metricsReconciler{source: metrics}
	c.recommend = newRecommendReconciler(c.opts.Algorithm)
	c.rescale = rescaleReconciler{
		patch: func(ctx context.Context, namespace string, resource schema.GroupVersionResource, name string, patch []byte) error {
			_, err := scales.Scales(namespace).Patch(ctx, resource, name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	}
	c.events = eventsReconciler{record: recorder.Event}
	c.status = statusReconciler{
		patch: func(ctx context.Context, namespace, name string, patch []byte) error {
			_, err := client.AutoscalingV1alpha1().FederatedHPAs(namespace).Patch(ctx, name, types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: FieldManager}, "status")
			return err
		},
	}
}

// hubPods lists a member's pods from the hub's informers; a member that is
// not Ready or whose informers have not listed has its pods unknown.
func hubPods(hub *member.Hub) func(cluster, namespace string, selector labels.Selector) ([]*member.Pod, error) {
	return func(cluster, namespace string, selector labels.Selector) ([]*member.Pod, error) {
		m, ok := hub.Member(cluster)
		if !ok || !m.Synced {
			return nil, errPodsUnknown
		}
		return m.Pods(namespace, selector)
	}
}

// Run computes FederatedHPAs with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}
