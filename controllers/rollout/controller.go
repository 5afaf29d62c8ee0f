// Package rollout rolls template changes out stage by stage. For a template
// whose policy names a RolloutStrategy (rollout.flotilla.io/strategy) it
// keeps the template's revisions (ResourceRevisions), holds each cluster of
// the placement at a revision through the binding's
// rollout.flotilla.io/revisions annotation (the binding controller builds
// each cluster's Work from it), and for each change starts a RolloutRun
// whose steps rolloutplan decides from the clusters' health: the run's
// Works applied at the new revision and healthy as the interpreter says,
// their clusters Ready. Without a strategy it does nothing.
package rollout

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	flotillainformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/flotilla/v1alpha1"
	policyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/policy/v1alpha1"
	workv1alpha1informers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	flotillalisters "github.com/flotilla-io/flotilla/apis/generated/listers/flotilla/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	workv1alpha1listers "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/ownwrites"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of the rollout controller in --controllers.
const ControllerName = "rollout"

// byBinding indexes ResourceRevisions and RolloutRuns by their binding's
// key (names.BindingKey of the template's namespace and the binding).
const byBinding = "binding"

// Controller is the rollout controller.
type Controller struct {
	templates  *templates.Informers
	rbs        worklisters.ResourceBindingLister
	crbs       worklisters.ClusterResourceBindingLister
	works      workv1alpha1listers.WorkLister
	clusters   clusterlisters.ClusterLister
	pps        policylisters.PropagationPolicyLister
	cpps       policylisters.ClusterPropagationPolicyLister
	strategies flotillalisters.RolloutStrategyLister
	revisions  cache.Indexer
	runs       cache.Indexer
	synced     []cache.InformerSynced
	client     versioned.Interface
	recorder   record.EventRecorder
	queue      workqueue.TypedRateLimitingInterface[string]
	// strategyQueue holds the names of strategies whose status to write.
	strategyQueue workqueue.TypedRateLimitingInterface[string]
	// now is the clock (tests set it).
	now func() time.Time

	// The controller's own writes the informers have not delivered yet:
	// deciding on the stale copies would write again, or conflict.
	// runWrites are the runs as their last status write left them,
	// revisionWrites the revisions annotation last patched on each
	// binding, and created the run created for a binding and not yet
	// cached (createdRun by binding key).
	runWrites      ownwrites.Writes[types.UID, *flotillav1alpha1.RolloutRun]
	revisionWrites ownwrites.Writes[types.UID, *string]
	created        sync.Map
}

// New returns the rollout controller.
func New(tmpl *templates.Informers, rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	works workv1alpha1informers.WorkInformer, clusters clusterinformers.ClusterInformer,
	pps policyinformers.PropagationPolicyInformer, cpps policyinformers.ClusterPropagationPolicyInformer,
	strategies flotillainformers.RolloutStrategyInformer, revisions flotillainformers.ResourceRevisionInformer,
	runs flotillainformers.RolloutRunInformer, client versioned.Interface, recorder record.EventRecorder) (*Controller, error) {
	index := cache.Indexers{byBinding: indexByBinding}
	for _, inf := range []cache.SharedIndexInformer{revisions.Informer(), runs.Informer()} {
		if err := inf.AddIndexers(index); err != nil {
			return nil, err
		}
	}
	c := &Controller{
		templates: tmpl, rbs: rbs.Lister(), crbs: crbs.Lister(), works: works.Lister(), clusters: clusters.Lister(),
		pps: pps.Lister(), cpps: cpps.Lister(), strategies: strategies.Lister(),
		revisions: revisions.Informer().GetIndexer(), runs: runs.Informer().GetIndexer(),
		synced: []cache.InformerSynced{rbs.Informer().HasSynced, crbs.Informer().HasSynced, works.Informer().HasSynced,
			clusters.Informer().HasSynced, pps.Informer().HasSynced, cpps.Informer().HasSynced, strategies.Informer().HasSynced,
			revisions.Informer().HasSynced, runs.Informer().HasSynced},
		client: client, recorder: recorder, queue: worker.NewQueue(ControllerName), now: time.Now,
		strategyQueue: worker.NewQueue(ControllerName + "-strategy"),
	}
	bindingHandler := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			ns, name, _ := cache.SplitMetaNamespaceKey(key)
			c.queue.Add(names.BindingKey(ns, name))
		}
	}
	for _, inf := range []cache.SharedIndexInformer{rbs.Informer(), crbs.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: bindingHandler,
			UpdateFunc: func(old, obj any) {
				o, n := old.(metav1.Object), obj.(metav1.Object)
				if o.GetGeneration() != n.GetGeneration() || o.GetAnnotations()[flotillav1alpha1.RevisionsAnnotation] != n.GetAnnotations()[flotillav1alpha1.RevisionsAnnotation] {
					bindingHandler(obj)
				}
			},
			DeleteFunc: bindingHandler,
		}); err != nil {
			return nil, err
		}
	}
	// A Work's status tells a cluster's health at its revision.
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			if w, ok := obj.(*workv1alpha1.Work); ok && w.Annotations[flotillav1alpha1.RevisionAnnotation] != "" {
				c.enqueueWorkOwner(w)
			}
		},
	}); err != nil {
		return nil, err
	}
	ownerOf := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		switch o := obj.(type) {
		case *flotillav1alpha1.ResourceRevision:
			c.queue.Add(names.BindingKey(o.Resource.Namespace, o.Binding))
		case *flotillav1alpha1.RolloutRun:
			c.queue.Add(names.BindingKey(o.Spec.Resource.Namespace, o.Spec.Binding))
		}
	}
	for _, inf := range []cache.SharedIndexInformer{revisions.Informer(), runs.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: ownerOf, UpdateFunc: func(_, obj any) { ownerOf(obj) }, DeleteFunc: ownerOf,
		}); err != nil {
			return nil, err
		}
	}
	// Strategies, policies and clusters change what every rolled out
	// binding does.
	all := func(any) { c.enqueueAll() }
	allHandler := cache.ResourceEventHandlerFuncs{AddFunc: all, UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all}
	if _, err := strategies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: worker.EnqueueKey(c.strategyQueue),
		UpdateFunc: func(old, obj any) {
			if old.(*flotillav1alpha1.RolloutStrategy).Generation != obj.(*flotillav1alpha1.RolloutStrategy).Generation {
				worker.EnqueueKey(c.strategyQueue)(obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{strategies.Informer(), pps.Informer(), cpps.Informer()} {
		if _, err := inf.AddEventHandler(allHandler); err != nil {
			return nil, err
		}
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, n := old.(*clusterv1alpha1.Cluster), obj.(*clusterv1alpha1.Cluster)
			if ready(o) != ready(n) || !labels.Equals(o.Labels, n.Labels) {
				c.enqueueAll()
			}
			if !labels.Equals(o.Labels, n.Labels) {
				c.enqueueStrategies()
			}
		},
		AddFunc:    func(any) { c.enqueueStrategies() },
		DeleteFunc: func(any) { c.enqueueStrategies() },
	}); err != nil {
		return nil, err
	}
	tmpl.AddHandler(c)
	return c, nil
}

// indexByBinding indexes ResourceRevisions and RolloutRuns by their
// binding's key.
func indexByBinding(obj any) ([]string, error) {
	switch o := obj.(type) {
	case *flotillav1alpha1.ResourceRevision:
		return []string{names.BindingKey(o.Resource.Namespace, o.Binding)}, nil
	case *flotillav1alpha1.RolloutRun:
		return []string{names.BindingKey(o.Spec.Resource.Namespace, o.Spec.Binding)}, nil
	}
	return nil, nil
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	go worker.Run(ctx, c.strategyQueue, c.synced, 1, c.reconcileStrategy)
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// enqueueStrategies queues every strategy: what the clusters are changed.
func (c *Controller) enqueueStrategies() {
	list, err := c.strategies.List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range list {
		c.strategyQueue.Add(s.Name)
	}
}

// OnTemplate implements templates.Handler: a template that changes may
// start a rollout.
func (c *Controller) OnTemplate(gvk schema.GroupVersionKind, old, obj *member.Compact, deleted bool) {
	if deleted || (old != nil && !templates.SpecChanged(old, obj)) {
		return
	}
	c.queue.Add(names.BindingKey(obj.GetNamespace(), names.BindingName(gvk.Kind, obj.GetName())))
}

func (c *Controller) enqueueWorkOwner(w *workv1alpha1.Work) {
	if key, ok := works.BindingKey(w); ok {
		c.queue.Add(key)
	}
}

// enqueueAll queues every binding a rollout holds (those with the
// revisions annotation) and, for a new strategy or policy, every binding.
func (c *Controller) enqueueAll() {
	if rbs, err := c.rbs.List(labels.Everything()); err == nil {
		for _, b := range rbs {
			c.queue.Add(names.BindingKey(b.Namespace, b.Name))
		}
	}
	if crbs, err := c.crbs.List(labels.Everything()); err == nil {
		for _, b := range crbs {
			c.queue.Add(names.BindingKey("", b.Name))
		}
	}
}

// ready tells whether a cluster's Ready condition is True.
func ready(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
