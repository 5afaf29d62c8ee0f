// Package binding turns scheduled (Cluster)ResourceBindings into Works: per
// target cluster, the template with its replicas revised, the overrides for
// that cluster applied, pruned and labelled as Karmada does, written to
// karmada-es-<cluster> (docs/compatibility.md, Bindings and Works). Works of
// clusters no longer targeted go; a binding being deleted waits for its Works
// to go.
package binding

import (
	"context"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

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
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/selectors"
)

// ControllerName is the name of the binding controller in --controllers.
const ControllerName = "binding"

// worksByBinding indexes Works by the permanent id of their binding.
const worksByBinding = "binding"

// OverrideFunc applies the override policies matching obj for cluster to
// obj (in place) and returns the annotations recording what was applied.
type OverrideFunc func(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	cops []*policyv1alpha1.ClusterOverridePolicy, ops []*policyv1alpha1.OverridePolicy) (map[string]string, error)

// CompletionsFunc divides a Job's completions over the scheduled clusters.
type CompletionsFunc func(completions int32, clusters []workv1alpha2.TargetCluster, uid string) map[string]int32

// Controller is the binding controller.
type Controller struct {
	templates *templates.Informers
	rbs       worklisters.ResourceBindingLister
	crbs      worklisters.ClusterResourceBindingLister
	works     cache.Indexer
	clusters  clusterlisters.ClusterLister
	cops      policylisters.ClusterOverridePolicyLister
	ops       policylisters.OverridePolicyLister
	revisions flotillalisters.ResourceRevisionLister
	synced    []cache.InformerSynced
	interp    interpreter.Interpreter
	overrides OverrideFunc
	recorder  record.EventRecorder
	queue     worker.Interface
	// created holds the Works this controller created until the informer
	// has them.
	created *works.Created

	// The sub-reconcilers (reconcile.go): the Works of a binding being
	// deleted, and those of a live one.
	finalize finalizeReconciler
	sync     syncReconciler
}

// setReconcilers builds the sub-reconcilers over client, which writes the
// Works and the bindings, and completions.
func (c *Controller) setReconcilers(client versioned.Interface, completions CompletionsFunc) {
	c.created = works.NewCreated(createdTTL, bindingID)
	deleteWork := func(ctx context.Context, namespace, name string) error {
		c.created.Forget(namespace, name)
		return client.WorkV1alpha1().Works(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	}
	c.finalize = finalizeReconciler{
		deleteWork: deleteWork,
		patchBinding: func(ctx context.Context, b *bindingView, patch []byte) error {
			var err error
			if b.cluster {
				_, err = client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, b.name, types.MergePatchType, patch, metav1.PatchOptions{})
			} else {
				_, err = client.WorkV1alpha2().ResourceBindings(b.namespace).Patch(ctx, b.name, types.MergePatchType, patch, metav1.PatchOptions{})
			}
			return err
		},
	}
	c.sync = syncReconciler{
		getCluster:  c.clusters.Get,
		held:        heldTemplate(c.revisions),
		build:       c.buildWork,
		completions: completions,
		writeWork: func(ctx context.Context, cur, desired *workv1alpha1.Work) error {
			return c.created.Write(ctx, client, cur, desired, "")
		},
		deleteWork: deleteWork,
		event:      c.recorder.Event,
	}
}

// New returns the binding controller.
func New(tmpl *templates.Informers, rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer,
	works workv1alpha1informers.WorkInformer, clusters clusterinformers.ClusterInformer,
	cops policyinformers.ClusterOverridePolicyInformer, ops policyinformers.OverridePolicyInformer,
	revisions flotillainformers.ResourceRevisionInformer,
	client versioned.Interface, interp interpreter.Interpreter, overrides OverrideFunc, completions CompletionsFunc,
	recorder record.EventRecorder) (*Controller, error) {
	if err := works.Informer().AddIndexers(cache.Indexers{worksByBinding: indexByBinding}); err != nil {
		return nil, err
	}
	c := &Controller{
		templates: tmpl, rbs: rbs.Lister(), crbs: crbs.Lister(), works: works.Informer().GetIndexer(),
		clusters: clusters.Lister(), cops: cops.Lister(), ops: ops.Lister(), revisions: revisions.Lister(),
		synced: []cache.InformerSynced{rbs.Informer().HasSynced, crbs.Informer().HasSynced, works.Informer().HasSynced,
			clusters.Informer().HasSynced, cops.Informer().HasSynced, ops.Informer().HasSynced, revisions.Informer().HasSynced},
		interp: interp, overrides: overrides, recorder: recorder,
		queue: worker.NewQueue(ControllerName),
	}
	c.setReconcilers(client, completions)
	// A revision a cluster is held at that arrives after the binding's
	// sync lets its Work be built.
	if _, err := revisions.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if r, ok := obj.(*flotillav1alpha1.ResourceRevision); ok {
				c.queue.Add(names.BindingKey(r.Resource.Namespace, r.Binding))
			}
		},
	}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{rbs.Informer(), crbs.Informer()} {
		enqueue := func(obj any, initial bool) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				ns, name, _ := cache.SplitMetaNamespaceKey(key)
				if initial {
					c.queue.AddInitial(names.BindingKey(ns, name))
					return
				}
				c.queue.Add(names.BindingKey(ns, name))
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
			AddFunc: enqueue,
			UpdateFunc: func(old, obj any) {
				if bindingChanged(old, obj) {
					enqueue(obj, false)
				}
			},
		}); err != nil {
			return nil, err
		}
	}
	if _, err := works.Informer().AddEventHandler(c.created.Handler()); err != nil {
		return nil, err
	}
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, n := old.(*workv1alpha1.Work), obj.(*workv1alpha1.Work)
			if o.Generation != n.Generation || (n.DeletionTimestamp != nil) != (o.DeletionTimestamp != nil) {
				c.enqueueWorkOwner(n)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if w, ok := obj.(*workv1alpha1.Work); ok {
				c.enqueueWorkOwner(w)
			}
		},
	}); err != nil {
		return nil, err
	}
	// A binding whose template kind is not watched yet (the detector starts
	// the informers as it sees policies, after a restart too) is synced
	// again when its template shows up, and when the template's spec
	// changes.
	tmpl.AddHandler(c)
	all := func(any) { c.enqueueAll() }
	allHandler := cache.ResourceEventHandlerFuncs{AddFunc: all, UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all}
	for _, inf := range []cache.SharedIndexInformer{cops.Informer(), ops.Informer()} {
		if _, err := inf.AddEventHandler(allHandler); err != nil {
			return nil, err
		}
	}
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			o, n := old.(*clusterv1alpha1.Cluster), obj.(*clusterv1alpha1.Cluster)
			if selectors.ClusterTargetingChanged(o, n) {
				c.enqueueAll()
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// createdTTL bounds how long a Work this controller created is read as
// stored while the informer has not delivered it.
const createdTTL = time.Minute

func indexByBinding(obj any) ([]string, error) {
	if w, ok := obj.(*workv1alpha1.Work); ok {
		if id := bindingID(w); id != "" {
			return []string{id}, nil
		}
	}
	return nil, nil
}

// bindingID is the permanent id of the binding w belongs to, "" if none.
func bindingID(w *workv1alpha1.Work) string {
	if id := w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]; id != "" {
		return id
	}
	return w.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
}

// bindingChanged tells whether an update matters here: spec (generation),
// deletion, or the labels Works carry.
func bindingChanged(old, obj any) bool {
	type metaObj interface {
		GetGeneration() int64
		GetLabels() map[string]string
		GetAnnotations() map[string]string
		GetFinalizers() []string
	}
	o, ok1 := old.(metaObj)
	n, ok2 := obj.(metaObj)
	if !ok1 || !ok2 {
		return true
	}
	var od, nd bool
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		nd = b.DeletionTimestamp != nil
		od = old.(*workv1alpha2.ResourceBinding).DeletionTimestamp != nil
	case *workv1alpha2.ClusterResourceBinding:
		nd = b.DeletionTimestamp != nil
		od = old.(*workv1alpha2.ClusterResourceBinding).DeletionTimestamp != nil
	}
	return o.GetGeneration() != n.GetGeneration() || od != nd || !labels.Equals(o.GetLabels(), n.GetLabels()) ||
		len(o.GetFinalizers()) != len(n.GetFinalizers()) ||
		o.GetAnnotations()[flotillav1alpha1.RevisionsAnnotation] != n.GetAnnotations()[flotillav1alpha1.RevisionsAnnotation] ||
		!maps.Equal(flotillav1alpha1.ApplyAnnotationsOf(o.GetAnnotations()), flotillav1alpha1.ApplyAnnotationsOf(n.GetAnnotations()))
}

// OnTemplate implements templates.Handler: it queues the binding of a
// template that appears or whose spec, labels or annotations change.
func (c *Controller) OnTemplate(gvk schema.GroupVersionKind, old, obj *member.Compact, deleted bool) {
	if deleted || (old != nil && !templates.SpecChanged(old, obj)) {
		return
	}
	name := names.BindingName(gvk.Kind, obj.GetName())
	if ns := obj.GetNamespace(); ns != "" {
		c.queue.Add(names.BindingKey(ns, name))
		return
	}
	c.queue.Add(names.BindingKey("", name))
}

func (c *Controller) enqueueWorkOwner(w *workv1alpha1.Work) {
	if key, ok := works.BindingKey(w); ok {
		c.queue.Add(key)
	}
}

// InterpreterChanged queues the bindings of templates of gvk: how the kind
// is interpreted (revised, retained) has changed.
func (c *Controller) InterpreterChanged(gvk schema.GroupVersionKind) {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	c.enqueueBindings(func(r workv1alpha2.ObjectReference) bool { return r.APIVersion == apiVersion && r.Kind == kind })
}

func (c *Controller) enqueueAll() { c.enqueueBindings(nil) }

// enqueueBindings queues the bindings whose resource match accepts (all
// when match is nil).
func (c *Controller) enqueueBindings(match func(workv1alpha2.ObjectReference) bool) {
	if rbs, err := c.rbs.List(labels.Everything()); err == nil {
		for _, b := range rbs {
			if match == nil || match(b.Spec.Resource) {
				c.queue.Add(names.BindingKey(b.Namespace, b.Name))
			}
		}
	}
	if crbs, err := c.crbs.List(labels.Everything()); err == nil {
		for _, b := range crbs {
			if match == nil || match(b.Spec.Resource) {
				c.queue.Add(names.BindingKey("", b.Name))
			}
		}
	}
}
