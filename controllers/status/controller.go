package status

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	bindinginformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	bindinglisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/ownwrites"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/interpreter"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "binding-status"

// Event reasons recorded on bindings and templates; Karmada's names.
const (
	// EventReasonAggregateStatusSucceed: the aggregated status was written.
	EventReasonAggregateStatusSucceed = "AggregateStatusSucceed"
	// EventReasonAggregateStatusFailed: the aggregated status could not be
	// computed or written.
	EventReasonAggregateStatusFailed = "AggregateStatusFailed"
)

// Controller aggregates the status of the Works of every binding into the
// binding's status and the status of its resource template.
type Controller struct {
	workIdx  cache.Indexer
	clusters clusterlisters.ClusterLister
	rbs      bindinglisters.ResourceBindingLister
	crbs     bindinglisters.ClusterResourceBindingLister
	synced   []cache.InformerSynced
	client   versioned.Interface
	host     dynamic.Interface
	mapper   meta.RESTMapper
	cached   TemplateCache
	interp   interpreter.Interpreter
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]
	now      func() time.Time
	// lags are how late each cluster's Works report.
	lags *reportLags
	// written holds, per binding key, the controller's last status write
	// until the cache catches up with it.
	written ownwrites.Writes[string, written]
}

// New returns the controller. works, clusters, rbs and crbs are informers of the
// control plane (the Work informer gets an index by binding); client writes
// binding status; host and mapper reach resource templates on the host;
// interp aggregates template status; recorder records events on bindings
// and templates, so its scheme must know the work.karmada.io kinds.
func New(works workinformers.WorkInformer, clusters clusterinformers.ClusterInformer, rbs bindinginformers.ResourceBindingInformer, crbs bindinginformers.ClusterResourceBindingInformer,
	client versioned.Interface, host dynamic.Interface, mapper meta.RESTMapper, interp interpreter.Interpreter, recorder record.EventRecorder,
) (*Controller, error) {
	c := &Controller{
		workIdx:  works.Informer().GetIndexer(),
		clusters: clusters.Lister(),
		rbs:      rbs.Lister(),
		crbs:     crbs.Lister(),
		synced: []cache.InformerSynced{works.Informer().HasSynced, clusters.Informer().HasSynced,
			rbs.Informer().HasSynced, crbs.Informer().HasSynced},
		client:   client,
		host:     host,
		mapper:   mapper,
		interp:   interp,
		recorder: recorder,
		queue:    worker.NewQueue(ControllerName),
		now:      time.Now,
		lags:     newReportLags(),
	}
	if err := works.Informer().AddIndexers(cache.Indexers{workBindingIndex: indexWorkByBinding}); err != nil {
		return nil, fmt.Errorf("indexing works by binding: %w", err)
	}
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.onWork, UpdateFunc: c.onWorkUpdate, DeleteFunc: c.onWork,
	}); err != nil {
		return nil, fmt.Errorf("watching works: %w", err)
	}
	if _, err := rbs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.onBinding, UpdateFunc: c.onBindingUpdate,
	}); err != nil {
		return nil, fmt.Errorf("watching resourcebindings: %w", err)
	}
	if _, err := crbs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.onBinding, UpdateFunc: c.onBindingUpdate,
	}); err != nil {
		return nil, fmt.Errorf("watching clusterresourcebindings: %w", err)
	}
	return c, nil
}

// TemplateCache reads templates from the informers that watch their kinds;
// kinds it does not watch answer templates.ErrNotWatched and are read from
// the host.
type TemplateCache interface {
	Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
}

// SetTemplateCache makes the controller read templates from cache rather
// than from the host whenever cache watches their kind.
func (c *Controller) SetTemplateCache(cache TemplateCache) { c.cached = cache }

// Run reconciles bindings with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}
