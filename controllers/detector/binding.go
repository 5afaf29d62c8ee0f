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

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/names"
)

// ownedSpecKeys are the JSON keys of the binding spec the detector owns;
// the scheduler owns clusters, other controllers the rest.
var ownedSpecKeys = []string{"resource", "propagateDeps", "replicaRequirements", "replicas", "components", "placement", "schedulerName",
	"failover", "conflictResolution", "suspension", "preserveResourcesOnDeletion", "workloadAffinityGroups", "schedulePriority"}

// desiredSpec builds the binding spec of obj under policy p: what the binding
// takes from the policy and from the interpreter (docs/compatibility.md, Which
// policy claims a template).
func (c *Controller) desiredSpec(gvk schema.GroupVersionKind, obj *unstructured.Unstructured, p *policy, existing *workv1alpha2.ResourceBindingSpec) (*workv1alpha2.ResourceBindingSpec, error) {
	spec := &workv1alpha2.ResourceBindingSpec{
		Resource: workv1alpha2.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
			Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()},
		PropagateDeps:               p.Spec.PropagateDeps || p.Spec.Association,
		Placement:                   p.Spec.Placement.DeepCopy(),
		SchedulerName:               p.Spec.SchedulerName,
		Failover:                    p.Spec.Failover.DeepCopy(),
		ConflictResolution:          conflictResolution(obj, p),
		PreserveResourcesOnDeletion: p.Spec.PreserveResourcesOnDeletion,
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = "default-scheduler"
	}
	spec.WorkloadAffinityGroups = affinityGroups(p.Spec.Placement.WorkloadAffinity, obj.GetLabels())
	if sp := p.Spec.SchedulePriority; sp != nil && sp.PriorityClassSource == policyv1alpha1.KubePriorityClass {
		pc, err := c.priorityClasses.Get(sp.PriorityClassName)
		if err != nil {
			return nil, fmt.Errorf("schedulePriority: %w", err)
		}
		spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: pc.Value}
	}
	if s := p.Spec.Suspension; s != nil || (existing != nil && existing.Suspension != nil && existing.Suspension.Scheduling != nil) {
		spec.Suspension = &workv1alpha2.Suspension{}
		if s != nil {
			spec.Suspension.Suspension = *s.DeepCopy()
		}
		if existing != nil && existing.Suspension != nil {
			spec.Suspension.Scheduling = existing.Suspension.Scheduling
		}
	}
	switch {
	case c.interp == nil:
	case c.MultiplePodTemplates && c.interp.HookEnabled(gvk, interpreter.InterpretComponent):
		// A workload of several pod templates is described by its
		// components alone, and scheduled as a whole; as in Karmada,
		// GetReplicas is then not asked.
		comps, err := c.interp.GetComponents(obj)
		if err != nil {
			return nil, &getComponentsError{fmt.Errorf("reading the components of %s %s: %w", gvk.Kind, obj.GetName(), err)}
		}
		if len(comps) > 0 {
			spec.Components = comps
		}
	case c.interp.HookEnabled(gvk, interpreter.InterpretReplica):
		replicas, req, err := c.interp.GetReplicas(obj)
		if err != nil {
			return nil, &getReplicasError{fmt.Errorf("reading the replicas of %s %s: %w", gvk.Kind, obj.GetName(), err)}
		}
		spec.Replicas, spec.ReplicaRequirements = replicas, req
	}
	return spec, nil
}

// getReplicasError is a failure of the interpreter's GetReplicas.
type getReplicasError struct{ error }

func (e *getReplicasError) Unwrap() error { return e.error }

// getComponentsError is a failure of the interpreter's GetComponents.
type getComponentsError struct{ error }

func (e *getComponentsError) Unwrap() error { return e.error }

// affinityGroups names the workload affinity groups of a template:
// "<groupByLabelKey>=<the template's value>", as Karmada names them; a template
// without the label is in no group.
func affinityGroups(wa *policyv1alpha1.WorkloadAffinity, lbls map[string]string) *workv1alpha2.WorkloadAffinityGroups {
	if wa == nil {
		return nil
	}
	g := &workv1alpha2.WorkloadAffinityGroups{}
	if wa.Affinity != nil {
		if v, ok := lbls[wa.Affinity.GroupByLabelKey]; ok {
			g.AffinityGroup = wa.Affinity.GroupByLabelKey + "=" + v
		}
	}
	if wa.AntiAffinity != nil {
		if v, ok := lbls[wa.AntiAffinity.GroupByLabelKey]; ok {
			g.AntiAffinityGroup = wa.AntiAffinity.GroupByLabelKey + "=" + v
		}
	}
	if *g == (workv1alpha2.WorkloadAffinityGroups{}) {
		return nil
	}
	return g
}

// conflictResolution is the policy's (Abort when unset), unless the template's
// work.karmada.io/conflict-resolution annotation says overwrite or abort; other
// values are ignored, as in Karmada.
func conflictResolution(obj *unstructured.Unstructured, p *policy) policyv1alpha1.ConflictResolution {
	switch obj.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] {
	case workv1alpha2.ResourceConflictResolutionOverwrite:
		return policyv1alpha1.ConflictOverwrite
	case workv1alpha2.ResourceConflictResolutionAbort:
		return policyv1alpha1.ConflictAbort
	}
	if p.Spec.ConflictResolution == "" {
		return policyv1alpha1.ConflictAbort
	}
	return p.Spec.ConflictResolution
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
