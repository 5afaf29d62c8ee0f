package detector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/selectors"
)

// ownedSpecKeys are the JSON keys of the binding spec the detector owns;
// the scheduler owns clusters, other controllers the rest.
var ownedSpecKeys = []string{"resource", "propagateDeps", "replicaRequirements", "replicas", "components", "placement", "schedulerName",
	"failover", "conflictResolution", "suspension", "preserveResourcesOnDeletion", "workloadAffinityGroups", "schedulePriority"}

// desiredSpec builds the binding spec of obj under policy p
// (selectors.BindingSpec), the interpreter reading its replicas or, when
// multiple pod templates are scheduled, its components.
func (c *Controller) desiredSpec(gvk schema.GroupVersionKind, obj *unstructured.Unstructured, p *policy, existing *workv1alpha2.ResourceBindingSpec) (*workv1alpha2.ResourceBindingSpec, error) {
	return selectors.BindingSpec(obj, p, existing, c.workload(gvk))
}

// workload is how the interpreter reads templates of kind gvk for their
// bindings.
func (c *Controller) workload(gvk schema.GroupVersionKind) selectors.Workload {
	w := interpreter.Workload(c.interp, gvk, c.MultiplePodTemplates)
	w.PriorityClass = func(name string) (int32, error) {
		pc, err := c.priorityClasses.Get(name)
		if err != nil {
			return 0, err
		}
		return pc.Value, nil
	}
	return w
}

// ownedSpec returns the owned part of spec as a JSON object, with null for
// owned keys that are empty so a merge patch clears them.
func ownedSpec(spec *workv1alpha2.ResourceBindingSpec) map[string]json.RawMessage {
	b, _ := json.Marshal(spec)
	all := map[string]json.RawMessage{}
	_ = json.Unmarshal(b, &all)
	out := map[string]json.RawMessage{}
	for _, k := range ownedSpecKeys {
		if v, ok := all[k]; ok {
			out[k] = v
		} else {
			out[k] = json.RawMessage("null")
		}
	}
	return out
}

func sameOwned(a, b map[string]json.RawMessage) bool {
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// errNotCached says a binding exists but the lister has not seen it yet:
// not a failure, the reconcile is simply retried.
var errNotCached = errors.New("exists but is not in the cache yet")

// ensureBinding creates or patches the binding of obj; wrote tells whether
// a write happened.
func (c *Controller) ensureBinding(ctx context.Context, gvk schema.GroupVersionKind, obj *unstructured.Unstructured, p *policy) (bool, error) {
	name := names.BindingName(gvk.Kind, obj.GetName())
	ns := obj.GetNamespace()
	var existing *workv1alpha2.ResourceBinding
	if ns != "" {
		rb, err := c.rbs.ResourceBindings(ns).Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		existing = rb
	} else {
		crb, err := c.crbs.Get(name)
		if err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		if crb != nil {
			existing = &workv1alpha2.ResourceBinding{ObjectMeta: crb.ObjectMeta, Spec: crb.Spec}
		}
	}
	var existingSpec *workv1alpha2.ResourceBindingSpec
	if existing != nil {
		if existing.DeletionTimestamp != nil {
			return false, fmt.Errorf("binding %s is being deleted", name)
		}
		existingSpec = &existing.Spec
	}
	spec, err := c.desiredSpec(gvk, obj, p, existingSpec)
	if err != nil {
		return false, err
	}
	lbls, annos := bindingMeta(p)
	if existing == nil {
		if _, ok := c.created.Load(ns + "/" + name); ok {
			// Created a moment ago: its add event queues the template
			// again, and then the cache has it.
			return false, nil
		}
		err := c.createBinding(ctx, obj, name, spec, lbls, annos)
		if err == nil {
			c.created.Store(ns+"/"+name, true)
		}
		return err == nil, err
	}
	// A new template resourceVersion alone (the detector's own claim
	// labels, for one) changes no decision: it is not worth a write and the
	// rescheduling a new binding generation would cause. It goes along
	// with the next write.
	same := *spec
	same.Resource.ResourceVersion = existingSpec.Resource.ResourceVersion
	if metaPatch(existing.Labels, existing.Annotations, lbls, annos) == nil && sameOwned(ownedSpec(&same), ownedSpec(existingSpec)) {
		return false, nil
	}
	patch, err := bindingPatch(existingSpec, spec, lbls, annos)
	if err != nil {
		return false, err
	}
	if ns != "" {
		_, err = c.client.WorkV1alpha2().ResourceBindings(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	return true, err
}

// bindingPatch is the merge patch from the owned part of existing to that
// of spec, with the claim metadata: nested fields the policy no longer
// sets (a suspension lifted, a spread constraint removed) become null, as
// a merge patch of the whole desired object would leave them in place.
func bindingPatch(existing, spec *workv1alpha2.ResourceBindingSpec, lbls, annos map[string]any) ([]byte, error) {
	from, err := json.Marshal(ownedSpec(existing))
	if err != nil {
		return nil, err
	}
	to, err := json.Marshal(ownedSpec(spec))
	if err != nil {
		return nil, err
	}
	diff, err := jsonpatch.CreateMergePatch(from, to)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": lbls, "annotations": annos},
		"spec":     json.RawMessage(diff),
	})
}

func (c *Controller) createBinding(ctx context.Context, obj *unstructured.Unstructured, name string, spec *workv1alpha2.ResourceBindingSpec, lbls, annos map[string]any) error {
	meta := metav1.ObjectMeta{
		Name: name, Namespace: obj.GetNamespace(), Labels: map[string]string{}, Annotations: map[string]string{},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Name: obj.GetName(),
			UID: obj.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
	}
	for k, v := range lbls {
		if v != nil {
			meta.Labels[k] = v.(string)
		}
	}
	for k, v := range annos {
		if v != nil {
			meta.Annotations[k] = v.(string)
		}
	}
	var err error
	if obj.GetNamespace() != "" {
		meta.Finalizers = []string{workv1alpha2.BindingControllerFinalizer}
		_, err = c.client.WorkV1alpha2().ResourceBindings(meta.Namespace).Create(ctx,
			&workv1alpha2.ResourceBinding{ObjectMeta: meta, Spec: *spec}, metav1.CreateOptions{})
	} else {
		meta.Finalizers = []string{workv1alpha2.ClusterResourceBindingControllerFinalizer}
		_, err = c.client.WorkV1alpha2().ClusterResourceBindings().Create(ctx,
			&workv1alpha2.ClusterResourceBinding{ObjectMeta: meta, Spec: *spec}, metav1.CreateOptions{})
	}
	if apierrors.IsAlreadyExists(err) {
		// The lister was behind; the next event brings it in line.
		return fmt.Errorf("binding %s: %w", name, errNotCached)
	}
	return err
}

// deleteBinding deletes the binding of a template that is gone. uid, when
// set, must match the binding's template uid.
func (c *Controller) deleteBinding(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, uid types.UID) error {
	bn := names.BindingName(gvk.Kind, name)
	var err error
	if ns != "" {
		rb, gerr := c.rbs.ResourceBindings(ns).Get(bn)
		if gerr != nil || rb.DeletionTimestamp != nil || rb.Spec.Resource.Kind != gvk.Kind || rb.Spec.Resource.Name != name {
			return nil
		}
		err = c.client.WorkV1alpha2().ResourceBindings(ns).Delete(ctx, bn, metav1.DeleteOptions{})
	} else {
		crb, gerr := c.crbs.Get(bn)
		if gerr != nil || crb.DeletionTimestamp != nil || crb.Spec.Resource.Kind != gvk.Kind || crb.Spec.Resource.Name != name {
			return nil
		}
		err = c.client.WorkV1alpha2().ClusterResourceBindings().Delete(ctx, bn, metav1.DeleteOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// unclaimBinding removes the claim metadata from a template's binding.
func (c *Controller) unclaimBinding(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) error {
	l, a := unclaimBindingMeta()
	return c.patchBindingMeta(ctx, gvk, ns, name, l, a)
}

// claimBinding writes p's claim metadata on a template's binding, if there
// is one, and nothing else.
func (c *Controller) claimBinding(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, p *policy) error {
	l, a := bindingMeta(p)
	return c.patchBindingMeta(ctx, gvk, ns, name, l, a)
}

// patchBindingMeta sets the labels and annotations l and a (nil values:
// removed) on a template's binding, unless it has them or does not exist.
func (c *Controller) patchBindingMeta(ctx context.Context, gvk schema.GroupVersionKind, ns, name string, l, a map[string]any) error {
	bn := names.BindingName(gvk.Kind, name)
	var err error
	if ns != "" {
		rb, gerr := c.rbs.ResourceBindings(ns).Get(bn)
		if gerr != nil {
			return nil
		}
		if patch := metaPatch(rb.Labels, rb.Annotations, l, a); patch != nil {
			_, err = c.client.WorkV1alpha2().ResourceBindings(ns).Patch(ctx, bn, types.MergePatchType, patch, metav1.PatchOptions{})
		}
	} else {
		crb, gerr := c.crbs.Get(bn)
		if gerr != nil {
			return nil
		}
		if patch := metaPatch(crb.Labels, crb.Annotations, l, a); patch != nil {
			_, err = c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, bn, types.MergePatchType, patch, metav1.PatchOptions{})
		}
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
