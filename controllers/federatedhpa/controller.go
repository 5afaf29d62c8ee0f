// Package federatedhpa is the FederatedHPA controller: the Kubernetes HPA
// algorithm (package calculator) over the pods of every member a template
// is placed on, with metrics read through the control plane's
// metrics.k8s.io and custom.metrics.k8s.io. It scales the template's
// `scale` subresource on the host; the scheduler then divides the new
// replica count over the members.
package federatedhpa

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
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
	"github.com/flotilla-io/flotilla/controllers/federatedhpa/calculator"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
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
	Algorithm calculator.Config
}

// Controller computes FederatedHPAs.
type Controller struct {
	opts     Options
	fhpas    autoscalinglisters.FederatedHPALister
	bindings worklisters.ResourceBindingLister
	synced   []cache.InformerSynced
	client   versioned.Interface
	scales   scale.ScalesGetter
	mapper   meta.RESTMapper
	members  *member.Hub
	metrics  MetricsSource
	recorder record.EventRecorder
	now      func() time.Time
	queue    workqueue.TypedRateLimitingInterface[string]

	mu sync.Mutex
	// histories are the algorithm's memory of each FederatedHPA.
	histories map[string]*calculator.History
	// selectors are the pod selectors each FederatedHPA last computed
	// with, to find pods two of them select.
	selectors map[string]labels.Selector
}

// New returns the controller. members are the member pod informers;
// metrics reads the control plane's metrics APIs.
func New(opts Options, fhpas autoscalinginformers.FederatedHPAInformer, bindings workinformers.ResourceBindingInformer,
	client versioned.Interface, scales scale.ScalesGetter, mapper meta.RESTMapper, members *member.Hub,
	metrics MetricsSource, recorder record.EventRecorder) (*Controller, error) {
	if opts.SyncPeriod <= 0 {
		opts.SyncPeriod = 15 * time.Second
	}
	c := &Controller{opts: opts, fhpas: fhpas.Lister(), bindings: bindings.Lister(),
		synced: []cache.InformerSynced{fhpas.Informer().HasSynced, bindings.Informer().HasSynced},
		client: client, scales: scales, mapper: mapper, members: members, metrics: metrics, recorder: recorder,
		now: time.Now, queue: worker.NewQueue(ControllerName),
		histories: map[string]*calculator.History{}, selectors: map[string]labels.Selector{}}
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

// Run computes FederatedHPAs with workers until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}
