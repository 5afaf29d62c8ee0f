// Package dependencies propagates what a template depends on (ConfigMaps,
// Secrets, ServiceAccounts, PVCs... as the interpreter's GetDependencies
// says) to the clusters the template is scheduled to, for bindings with
// propagateDeps (Karmada's dependencies distributor, API-SPEC §9): each
// dependency gets an "attached" ResourceBinding whose spec.requiredBy
// snapshots the clusters of every binding depending on it; the binding
// controller propagates it to the union of those clusters.
package dependencies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/names"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/interpreter"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "dependencies"

// Controller is the dependencies distributor.
type Controller struct {
	templates *templates.Informers
	rbs       worklisters.ResourceBindingLister
	synced    []cache.InformerSynced
	client    versioned.Interface
	interp    interpreter.Interpreter
	recorder  record.EventRecorder
	queue     workqueue.TypedRateLimitingInterface[string] // keys of depending bindings: ns/name
}

// New returns the controller.
func New(tmpl *templates.Informers, rbs workinformers.ResourceBindingInformer, client versioned.Interface, interp interpreter.Interpreter,
	recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{templates: tmpl, rbs: rbs.Lister(), synced: []cache.InformerSynced{rbs.Informer().HasSynced},
		client: client, interp: interp, recorder: recorder, queue: worker.NewQueue(ControllerName)}
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
func (c *Controller) OnTemplate(gvk schema.GroupVersionKind, old, obj *unstructured.Unstructured, deleted bool) {
	if key, ok := c.templateKey(gvk, old, obj, deleted); ok {
		c.queue.Add(key)
	}
}

// templateKey is the queue key of the binding to sync for a template
// event: none for deletions (the binding's deletion follows), status-only
// updates, cluster-scoped kinds and templates whose binding neither
// propagates nor recorded dependencies.
func (c *Controller) templateKey(gvk schema.GroupVersionKind, old, obj *unstructured.Unstructured, deleted bool) (string, bool) {
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

func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	rb, err := c.rbs.ResourceBindings(ns).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && rb.DeletionTimestamp != nil) {
		return c.release(ctx, ns, name, nil)
	}
	if err != nil {
		return err
	}
	if !rb.Spec.PropagateDeps {
		if err := c.release(ctx, ns, name, nil); err != nil {
			return err
		}
		_, err := c.annotate(ctx, rb, nil)
		return err
	}
	tmpl, deps, err := c.dependencies(ctx, rb)
	if err != nil {
		if tmpl != nil {
			c.event(templateRef(tmpl), corev1.EventTypeWarning, EventReasonGetDependenciesFailed, fmt.Sprintf("Get dependencies failed: %v", err))
		}
		return err
	}
	var errs []error
	synced := false
	keep := map[string]bool{}
	for _, d := range deps {
		keep[names.BindingName(d.Kind, d.Name)] = true
		wrote, err := c.attach(ctx, rb, d)
		if err != nil {
			errs = append(errs, err)
		}
		synced = synced || wrote
	}
	if err := c.release(ctx, ns, name, keep); err != nil {
		errs = append(errs, err)
	}
	annotated, err := c.annotate(ctx, rb, deps)
	if err != nil {
		errs = append(errs, err)
	}
	if annotated && tmpl != nil {
		c.event(templateRef(tmpl), corev1.EventTypeNormal, EventReasonGetDependenciesSucceed, fmt.Sprintf("Get dependencies(%s) succeed.", describeDeps(deps)))
	}
	switch {
	case len(errs) > 0:
		c.event(rb, corev1.EventTypeWarning, EventReasonSyncScheduleResultToDependenciesFailed,
			fmt.Sprintf("Failed to sync schedule results to dependencies: %v", errors.Join(errs...)))
	case synced:
		c.event(rb, corev1.EventTypeNormal, EventReasonSyncScheduleResultToDependenciesSucceed, "Sync schedule results to dependencies succeed.")
	}
	return errors.Join(errs...)
}

func (c *Controller) event(obj runtime.Object, eventType, reason, msg string) {
	if c.recorder != nil {
		c.recorder.Event(obj, eventType, reason, msg)
	}
}

func templateRef(obj *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
		Name: obj.GetName(), UID: obj.GetUID()}
}

// describeDeps lists dependencies as "[Kind/namespace/name ...]".
func describeDeps(deps []dependency) string {
	s := make([]string, len(deps))
	for i, d := range deps {
		s[i] = d.Kind + "/" + d.Namespace + "/" + d.Name
	}
	return "[" + strings.Join(s, " ") + "]"
}

// dependencies lists what the binding's template depends on, expanding
// label selectors over the template's namespace.
// The template is returned when it was read.
func (c *Controller) dependencies(ctx context.Context, rb *workv1alpha2.ResourceBinding) (*unstructured.Unstructured, []dependency, error) {
	gvk := schema.FromAPIVersionAndKind(rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind)
	if c.interp == nil || !c.interp.HookEnabled(gvk, interpreter.InterpretDependency) {
		return nil, nil, nil
	}
	tmpl, err := c.templates.Get(ctx, gvk, rb.Spec.Resource.Namespace, rb.Spec.Resource.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		// Not watched yet (just after a restart): retry rather than take
		// the template for one without dependencies and release them.
		return nil, nil, fmt.Errorf("reading the template of %s/%s: %w", rb.Namespace, rb.Name, err)
	}
	refs, err := c.interp.GetDependencies(tmpl)
	if err != nil {
		return tmpl, nil, err
	}
	var out []dependency
	for _, r := range refs {
		ns := r.Namespace
		if ns == "" {
			ns = rb.Namespace
		}
		if r.Name != "" {
			out = append(out, dependency{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: ns, Name: r.Name})
			continue
		}
		if r.LabelSelector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(r.LabelSelector)
		if err != nil {
			continue
		}
		res, _, err := c.templates.Resource(schema.FromAPIVersionAndKind(r.APIVersion, r.Kind))
		if err != nil {
			return tmpl, nil, err
		}
		list, err := res.Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			return tmpl, nil, err
		}
		for _, o := range list.Items {
			out = append(out, dependency{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: ns, Name: o.GetName()})
		}
	}
	slices.SortFunc(out, func(a, b dependency) int { return strings.Compare(a.Kind+"/"+a.Name, b.Kind+"/"+b.Name) })
	return tmpl, slices.Compact(out), nil
}

// attach makes the attached binding of d require rb's clusters; wrote
// tells whether it wrote.
func (c *Controller) attach(ctx context.Context, rb *workv1alpha2.ResourceBinding, d dependency) (bool, error) {
	gvk := schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)
	res, _, err := c.templates.Resource(gvk)
	if err != nil {
		return false, err
	}
	obj, err := res.Namespace(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		// Not there yet: the template's next change brings us back.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	label := DependedByLabel(rb.Namespace, rb.Name)
	id := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
	snap := workv1alpha2.BindingSnapshot{Namespace: rb.Namespace, Name: rb.Name, Clusters: rb.Spec.Clusters}
	bn := names.BindingName(d.Kind, d.Name)
	cur, err := c.rbs.ResourceBindings(d.Namespace).Get(bn)
	if apierrors.IsNotFound(err) {
		return true, c.createAttached(ctx, obj, bn, label, id, snap, policyOf(&rb.Spec))
	}
	if err != nil {
		return false, err
	}
	required := slices.Clone(cur.Spec.RequiredBy)
	i := slices.IndexFunc(required, func(s workv1alpha2.BindingSnapshot) bool { return s.Namespace == rb.Namespace && s.Name == rb.Name })
	if i >= 0 {
		required[i] = snap
	} else {
		required = append(required, snap)
	}
	spec := map[string]any{"requiredBy": required}
	merged, conflict, own := c.attachedPolicy(cur, required, rb)
	if own {
		spec["conflictResolution"] = merged.ConflictResolution
		spec["preserveResourcesOnDeletion"] = merged.PreserveResourcesOnDeletion
	}
	// As in Karmada, every sync of a requirer that finds its requirers
	// disagreeing says so; the recorder folds repeats into a count.
	if conflict != "" {
		c.event(cur, corev1.EventTypeWarning, EventReasonDependencyPolicyConflict, conflict)
	}
	if i >= 0 && cur.Labels[label] == id && sameClusters(cur.Spec.RequiredBy[i].Clusters, snap.Clusters) && (!own || policyOf(&cur.Spec) == merged) {
		return false, nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{label: id}}, "spec": spec})
	if _, err := c.client.WorkV1alpha2().ResourceBindings(d.Namespace).Patch(ctx, bn, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return false, err
	}
	return true, nil
}

// attachedPolicy merges the policies of the bindings in required (rb as
// given, the others from the cache) into the attached binding's
// (mergeRequirers); own is false when the dependency has a policy of its
// own, which then decides.
func (c *Controller) attachedPolicy(attached *workv1alpha2.ResourceBinding, required []workv1alpha2.BindingSnapshot,
	rb *workv1alpha2.ResourceBinding) (merged requirerPolicy, conflict string, own bool) {
	if attached.Spec.Placement != nil {
		return requirerPolicy{}, "", false
	}
	var rs []requirer
	for _, s := range required {
		if rb != nil && s.Namespace == rb.Namespace && s.Name == rb.Name {
			rs = append(rs, requirerOf(rb))
			continue
		}
		if r, err := c.rbs.ResourceBindings(s.Namespace).Get(s.Name); err == nil {
			rs = append(rs, requirerOf(r))
		}
	}
	merged, conflict = mergeRequirers(rs)
	return merged, conflict, true
}

func (c *Controller) createAttached(ctx context.Context, obj *unstructured.Unstructured, name, label, id string, snap workv1alpha2.BindingSnapshot, p requirerPolicy) error {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: obj.GetNamespace(), Labels: map[string]string{label: id},
			Finalizers:      []string{workv1alpha2.BindingControllerFinalizer},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(), UID: obj.GetUID()}}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
				Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
			RequiredBy:                  []workv1alpha2.BindingSnapshot{snap},
			ConflictResolution:          p.ConflictResolution,
			PreserveResourcesOnDeletion: ptr.To(p.PreserveResourcesOnDeletion),
		},
	}
	_, err := c.client.WorkV1alpha2().ResourceBindings(rb.Namespace).Create(ctx, rb, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("attached binding %s/%s exists but is not in the cache yet", rb.Namespace, name)
	}
	return err
}

// release removes the binding ns/name from the attached bindings it no
// longer depends on (all but keep); attached bindings required by nobody
// and not claimed by a policy of their own are deleted.
func (c *Controller) release(ctx context.Context, ns, name string, keep map[string]bool) error {
	label := DependedByLabel(ns, name)
	req, err := labels.NewRequirement(label, "exists", nil)
	if err != nil {
		return err
	}
	list, err := c.rbs.ResourceBindings(ns).List(labels.NewSelector().Add(*req))
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range list {
		if keep[a.Name] {
			continue
		}
		required := slices.DeleteFunc(slices.Clone(a.Spec.RequiredBy), func(s workv1alpha2.BindingSnapshot) bool {
			return s.Namespace == ns && s.Name == name
		})
		if len(required) == 0 && a.Spec.Placement == nil {
			if err := c.client.WorkV1alpha2().ResourceBindings(ns).Delete(ctx, a.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		spec := map[string]any{"requiredBy": required}
		// The policies of the remaining requirers decide now: a conflict
		// may be gone.
		if merged, _, own := c.attachedPolicy(a, required, nil); own {
			spec["conflictResolution"] = merged.ConflictResolution
			spec["preserveResourcesOnDeletion"] = merged.PreserveResourcesOnDeletion
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{label: nil}}, "spec": spec})
		if _, err := c.client.WorkV1alpha2().ResourceBindings(ns).Patch(ctx, a.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// annotate records the dependencies on the depending binding; wrote tells
// whether they changed.
func (c *Controller) annotate(ctx context.Context, rb *workv1alpha2.ResourceBinding, deps []dependency) (bool, error) {
	var value any
	if len(deps) > 0 {
		b, _ := json.Marshal(deps)
		value = string(b)
	}
	cur, had := rb.Annotations[workv1alpha2.BindingDependenciesAnnotationKey]
	if (value == nil && !had) || (value != nil && cur == value.(string)) {
		return false, nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{workv1alpha2.BindingDependenciesAnnotationKey: value}}})
	_, err := c.client.WorkV1alpha2().ResourceBindings(rb.Namespace).Patch(ctx, rb.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && value != nil, err
}

func sameClusters(a, b []workv1alpha2.TargetCluster) bool {
	return slices.EqualFunc(a, b, func(x, y workv1alpha2.TargetCluster) bool { return x.Name == y.Name && x.Replicas == y.Replicas })
}
