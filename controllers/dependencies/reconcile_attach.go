package dependencies

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// attachReconciler makes the attached binding of a dependency require the
// clusters of a binding depending on it.
type attachReconciler struct {
	// getObject reads a dependency on the host.
	getObject func(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error)
	// bindings: get, create and patch.
	bindings bindingAPI
	event    func(obj runtime.Object, eventType, reason, msg string)
}

// reconcile creates the attached binding of d, or patches rb's snapshot
// (and the merged policy of the requirers) into it; nothing is written when
// it is up to date, d does not exist yet, or another system claims d
// (resourcetemplate.karmada.io/claimed-by, as the detector reads it: the
// control plane's copies of exported EndpointSlices, which a ServiceImport
// depends on, are the ServiceExport machinery's, and reach the importing
// members by its own Works). wrote tells whether it wrote.
func (r *attachReconciler) reconcile(ctx context.Context, rb *workv1alpha2.ResourceBinding, d dependency) (bool, error) {
	obj, err := r.getObject(ctx, schema.FromAPIVersionAndKind(d.APIVersion, d.Kind), d.Namespace, d.Name)
	if apierrors.IsNotFound(err) {
		// Not there yet: the template's next change brings us back.
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if obj.GetLabels()[workv1alpha2.ResourceTemplateClaimedByLabel] != "" {
		return false, nil
	}
	label := DependedByLabel(rb.Namespace, rb.Name)
	id := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
	snap := workv1alpha2.BindingSnapshot{Namespace: rb.Namespace, Name: rb.Name, Clusters: rb.Spec.Clusters}
	bn := names.BindingName(d.Kind, d.Name)
	cur, err := r.bindings.get(d.Namespace, bn)
	if apierrors.IsNotFound(err) {
		return true, r.create(ctx, obj, bn, label, id, snap, policyOf(&rb.Spec))
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
	merged, conflict, own := attachedPolicy(r.bindings.get, cur, required, rb)
	if own {
		spec["conflictResolution"] = merged.ConflictResolution
		spec["preserveResourcesOnDeletion"] = merged.PreserveResourcesOnDeletion
	}
	// As in Karmada, every sync of a requirer that finds its requirers
	// disagreeing says so; the recorder folds repeats into a count.
	if conflict != "" {
		r.event(cur, corev1.EventTypeWarning, EventReasonDependencyPolicyConflict, conflict)
	}
	if i >= 0 && cur.Labels[label] == id && sameClusters(cur.Spec.RequiredBy[i].Clusters, snap.Clusters) && (!own || policyOf(&cur.Spec) == merged) {
		return false, nil
	}
	// requiredBy is replaced whole, computed from the cached binding: the
	// resourceVersion makes the write conditional on that copy, so two
	// requirers syncing at once cannot drop each other (the loser gets a
	// conflict and syncs again from a fresh cache).
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{label: id}, "resourceVersion": cur.ResourceVersion}, "spec": spec})
	if err := r.bindings.patch(ctx, d.Namespace, bn, patch); err != nil {
		return false, err
	}
	return true, nil
}

// create creates the attached binding name of obj, required by snap.
func (r *attachReconciler) create(ctx context.Context, obj *unstructured.Unstructured, name, label, id string, snap workv1alpha2.BindingSnapshot, p requirerPolicy) error {
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
	err := r.bindings.create(ctx, rb)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("attached binding %s/%s exists but is not in the cache yet", rb.Namespace, name)
	}
	return err
}

// attachedPolicy merges the policies of the bindings in required (rb as
// given, the others read with get) into the attached binding's
// (mergeRequirers); own is false when the dependency has a policy of its
// own, which then decides.
func attachedPolicy(get func(namespace, name string) (*workv1alpha2.ResourceBinding, error), attached *workv1alpha2.ResourceBinding,
	required []workv1alpha2.BindingSnapshot, rb *workv1alpha2.ResourceBinding) (merged requirerPolicy, conflict string, own bool) {
	if attached.Spec.Placement != nil {
		return requirerPolicy{}, "", false
	}
	var rs []requirer
	for _, s := range required {
		if rb != nil && s.Namespace == rb.Namespace && s.Name == rb.Name {
			rs = append(rs, requirerOf(rb))
			continue
		}
		if r, err := get(s.Namespace, s.Name); err == nil {
			rs = append(rs, requirerOf(r))
		}
	}
	merged, conflict = mergeRequirers(rs)
	return merged, conflict, true
}

func sameClusters(a, b []workv1alpha2.TargetCluster) bool {
	return slices.EqualFunc(a, b, func(x, y workv1alpha2.TargetCluster) bool { return x.Name == y.Name && x.Replicas == y.Replicas })
}
