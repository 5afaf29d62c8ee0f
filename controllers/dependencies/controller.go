// Package dependencies propagates what a template depends on (ConfigMaps,
// Secrets, ServiceAccounts, PVCs... as the interpreter's GetDependencies says)
// to the clusters the template is scheduled to, for bindings with propagateDeps
// (Karmada's dependencies distributor; docs/compatibility.md, Dependencies):
// each dependency gets an "attached" ResourceBinding whose spec.requiredBy
// snapshots the clusters of every binding depending on it; the binding
// controller propagates it to the union of those clusters.
package dependencies

import (
	"context"
	"hash/fnv"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "dependencies"

// Controller is the dependencies distributor.
type Controller struct {
	rbs      worklisters.ResourceBindingLister
	synced   []cache.InformerSynced
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string] // keys of depending bindings: ns/name

	// The sub-reconcilers, in the order reconcile runs them.
	discover discoverReconciler
	attach   attachReconciler
	release  releaseReconciler
	annotate annotateReconciler
}

// setReconcilers builds the sub-reconcilers: templates and dependencies
// are read through tmpl, bindings from the cache and written with client.
func (c *Controller) setReconcilers(tmpl *templates.Informers, client versioned.Interface, interp interpreter.Interpreter) {
	bindings := bindingAPI{
		get: func(namespace, name string) (*workv1alpha2.ResourceBinding, error) {
			return c.rbs.ResourceBindings(namespace).Get(name)
		},
		list: func(namespace string, selector labels.Selector) ([]*workv1alpha2.ResourceBinding, error) {
			return c.rbs.ResourceBindings(namespace).List(selector)
		},
		create: func(ctx context.Context, rb *workv1alpha2.ResourceBinding) error {
			_, err := client.WorkV1alpha2().ResourceBindings(rb.Namespace).Create(ctx, rb, metav1.CreateOptions{})
			return err
		},
		patch: func(ctx context.Context, namespace, name string, patch []byte) error {
			_, err := client.WorkV1alpha2().ResourceBindings(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
		delete: func(ctx context.Context, namespace, name string) error {
			return client.WorkV1alpha2().ResourceBindings(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		},
	}
	c.discover = discoverReconciler{
		enabled: func(gvk schema.GroupVersionKind) bool {
			return interp != nil && interp.HookEnabled(gvk, interpreter.InterpretDependency)
		},
		interpret: func(obj *unstructured.Unstructured) ([]interpreter.DependentObjectReference, error) {
			return interp.GetDependencies(obj)
		},
		getTemplate: tmpl.Get,
		listNames: func(ctx context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]string, error) {
			res, _, err := tmpl.Resource(gvk)
			if err != nil {
				return nil, err
			}
			list, err := res.Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
			if err != nil {
				return nil, err
			}
			out := make([]string, len(list.Items))
			for i := range list.Items {
				out[i] = list.Items[i].GetName()
			}
			return out, nil
		},
	}
	c.attach = attachReconciler{
		getObject: func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
			res, _, err := tmpl.Resource(gvk)
			if err != nil {
				return nil, err
			}
			return res.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		bindings: bindings,
		event:    c.event,
	}
	c.release = releaseReconciler{bindings: bindings}
	c.annotate = annotateReconciler{patch: bindings.patch}
}

// New returns the controller.
func New(tmpl *templates.Informers, rbs workinformers.ResourceBindingInformer, client versioned.Interface, interp interpreter.Interpreter,
	recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{rbs: rbs.Lister(), synced: []cache.InformerSynced{rbs.Informer().HasSynced},
		recorder: recorder, queue: worker.NewQueue(ControllerName)}
	c.setReconcilers(tmpl, client, interp)
	enqueue := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		rb, ok := obj.(*workv1alpha2.ResourceBinding)
		if !ok {
			return
		}
		if rb.Spec.PropagateDeps || rb.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] != "" {
			c.queue.Add(rb.Namespace + "/" + rb.Name)
		}
		// An attached binding names the bindings depending on it; check
		// they still exist (cleanup after a missed deletion).
		for _, r := range rb.Spec.RequiredBy {
			c.queue.Add(r.Namespace + "/" + r.Name)
		}
	}
	if _, err := rbs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, obj any) {
			o, n := old.(*workv1alpha2.ResourceBinding), obj.(*workv1alpha2.ResourceBinding)
			// A claim gained or lost changes whether the binding's policy
			// votes on its dependencies' (mergeRequirers).
			if o.Generation != n.Generation || o.Spec.PropagateDeps != n.Spec.PropagateDeps ||
				o.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] != n.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] ||
				requirerOf(o).claimed != requirerOf(n).claimed {
				enqueue(obj)
			}
		},
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, err
	}
	// What a template depends on changes with the template, often without
	// a change of its binding's spec (a new serviceAccountName, other
	// volumes). Handlers must be added before the detector first watches a
	// kind: controllers start in name order, "dependencies" before
	// "detector".
	if tmpl != nil {
		tmpl.AddHandler(c)
	}
	return c, nil
}

var _ templates.Handler = (*Controller)(nil)

// OnTemplate implements templates.Handler: the binding of a changed
// template is synced again when it propagates dependencies (or did: it may
// have to release them).
func (c *Controller) OnTemplate(gvk schema.GroupVersionKind, old, obj *member.Compact, deleted bool) {
	if key, ok := c.templateKey(gvk, old, obj, deleted); ok {
		c.queue.Add(key)
	}
}

// templateKey is the queue key of the binding to sync for a template
// event: none for deletions (the binding's deletion follows), status-only
// updates, cluster-scoped kinds and templates whose binding neither
// propagates nor recorded dependencies.
func (c *Controller) templateKey(gvk schema.GroupVersionKind, old, obj *member.Compact, deleted bool) (string, bool) {
	if deleted || obj.GetNamespace() == "" || (old != nil && !templates.SpecChanged(old, obj)) {
		return "", false
	}
	rb, err := c.rbs.ResourceBindings(obj.GetNamespace()).Get(names.BindingName(gvk.Kind, obj.GetName()))
	if err != nil || (!rb.Spec.PropagateDeps && rb.Annotations[workv1alpha2.BindingDependenciesAnnotationKey] == "") {
		return "", false
	}
	return rb.Namespace + "/" + rb.Name, true
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// DependedByLabel is the label an attached binding carries for each binding
// depending on it.
func DependedByLabel(namespace, name string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace + "/" + name))
	return workv1alpha2.DependedByLabelKeyPrefix + strconv.FormatUint(uint64(h.Sum32()), 10)
}

// dependency is one object a template depends on, as recorded in the
// dependencies annotation.
type dependency struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}
