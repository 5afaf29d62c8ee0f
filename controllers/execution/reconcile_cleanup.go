package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// karmadaLabels and karmadaAnnotations are the metadata Flotilla puts on
// the objects it applies, and takes off an object it releases (a deleted
// Work that preserves its resources), as Karmada does.
var (
	karmadaLabels = []string{
		workv1alpha1.ManagedByKarmadaLabel,
		workv1alpha2.WorkPermanentIDLabel,
		workv1alpha2.ResourceBindingPermanentIDLabel,
		workv1alpha2.ClusterResourceBindingPermanentIDLabel,
		policyv1alpha1.PropagationPolicyPermanentIDLabel,
		policyv1alpha1.ClusterPropagationPolicyPermanentIDLabel,
	}
	karmadaAnnotations = []string{
		workv1alpha2.ManagedAnnotation,
		workv1alpha2.ManagedLabels,
		workv1alpha2.ResourceBindingNamespaceAnnotationKey,
		workv1alpha2.ResourceBindingNameAnnotationKey,
		workv1alpha2.ClusterResourceBindingAnnotationKey,
		workv1alpha2.ResourceTemplateUIDAnnotation,
		workv1alpha2.ResourceTemplateGenerationAnnotationKey,
		workv1alpha2.WorkNameAnnotation,
		workv1alpha2.WorkNamespaceAnnotation,
		workv1alpha2.AdoptedAnnotation,
		policyv1alpha1.PropagationPolicyNamespaceAnnotation,
		policyv1alpha1.PropagationPolicyNameAnnotation,
		policyv1alpha1.ClusterPropagationPolicyAnnotation,
	}
)

// cleanupReconciler deletes the member objects of a deleted Work, or
// releases them when the Work preserves its resources.
type cleanupReconciler struct {
	// objects reaches the member's objects.
	objects memberObjects
}

// reconcile cleans up after every manifest of work. Only objects labelled
// with the Work's permanent id are touched: an object Flotilla did not
// apply for this Work is never deleted nor changed. An object Flotilla took
// over (AdoptedAnnotation) is released, never deleted: Flotilla did not
// create it.
func (r *cleanupReconciler) reconcile(ctx context.Context, work *workv1alpha1.Work) error {
	id := work.Labels[workv1alpha2.WorkPermanentIDLabel]
	preserve := ptr.Deref(work.Spec.PreserveResourcesOnDeletion, false)
	var errs []error
	for i, m := range work.Spec.Workload.Manifests {
		desired, err := decodeManifest(m.Raw)
		if err != nil {
			// Never applied, nothing to clean up.
			continue
		}
		if err := r.cleanupManifest(ctx, desired, id, preserve); err != nil {
			errs = append(errs, fmt.Errorf("manifest %d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

func (r *cleanupReconciler) cleanupManifest(ctx context.Context, desired *unstructured.Unstructured, id string, preserve bool) error {
	log := klog.FromContext(ctx).WithValues("kind", desired.GetKind(), "object", klog.KObj(desired))
	gvr, err := r.objects.resource(desired)
	if meta.IsNoMatchError(err) {
		return nil // the kind does not exist in the member: neither does the object
	}
	if err != nil {
		return err
	}
	// A live read, not the cache: a deletion decided on a stale cache
	// would leave an object behind for good.
	observed, err := r.objects.get(ctx, gvr, desired)
	if err != nil || observed == nil {
		return err
	}
	if id == "" || observed.GetLabels()[workv1alpha2.WorkPermanentIDLabel] != id {
		log.V(2).Info("Leaving a member object the Work did not apply")
		return nil
	}
	if preserve || observed.GetAnnotations()[workv1alpha2.AdoptedAnnotation] == "true" {
		patch, ok := releasePatch(observed)
		if !ok {
			return nil
		}
		err := r.objects.patch(ctx, gvr, observed, patch)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			log.V(2).Info("Released member object")
		}
		return err
	}
	err = r.objects.delete(ctx, gvr, observed)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		log.V(2).Info("Deleted member object")
	}
	return err
}

// releasePatch is the merge patch removing Flotilla's labels and
// annotations from obj; false when it has none.
func releasePatch(obj *unstructured.Unstructured) ([]byte, bool) {
	remove := func(present map[string]string, keys []string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if _, ok := present[k]; ok {
				out[k] = nil
			}
		}
		return out
	}
	labels := remove(obj.GetLabels(), karmadaLabels)
	annotations := remove(obj.GetAnnotations(), karmadaAnnotations)
	if len(labels) == 0 && len(annotations) == 0 {
		return nil, false
	}
	md := map[string]any{}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	if len(annotations) > 0 {
		md["annotations"] = annotations
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	return patch, err == nil
}
