package binding

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// finalizeReconciler deletes the Works of a binding being deleted and
// drops the binding's finalizer once they are gone.
type finalizeReconciler struct {
	// deleteWork deletes a Work.
	deleteWork func(ctx context.Context, namespace, name string) error
	// patchBinding merge-patches the binding.
	patchBinding func(ctx context.Context, b *bindingView, patch []byte) error
}

// reconcile deletes existing, the binding's Works, and, when there are none
// left, removes the binding controller's finalizer from finalizers, the
// binding's.
func (r *finalizeReconciler) reconcile(ctx context.Context, b *bindingView, existing []*workv1alpha1.Work, finalizers []string) error {
	for _, w := range existing {
		if w.DeletionTimestamp != nil {
			continue
		}
		if err := r.deleteWork(ctx, w.Namespace, w.Name); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if len(existing) > 0 {
		// Each Work's deletion re-queues the binding.
		return nil
	}
	fin := workv1alpha2.BindingControllerFinalizer
	if b.cluster {
		fin = workv1alpha2.ClusterResourceBindingControllerFinalizer
	}
	if !hasString(finalizers, fin) {
		return nil
	}
	var keep []string
	for _, f := range finalizers {
		if f != fin {
			keep = append(keep, f)
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": keep}})
	err := r.patchBinding(ctx, b, patch)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
