package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// finalizerReconciler keeps the execution finalizer of a Work: added while
// the Work lives, so that its member objects are cleaned up when it is
// deleted, and removed once they are.
type finalizerReconciler struct {
	// patch patches the Work.
	patch workPatchFunc
}

// ensure adds the execution finalizer to a Work that lacks it. The binding
// controller creates Works with it; this covers Works made by hand. The
// merge patch carries the resourceVersion, so that it never drops a
// finalizer added meanwhile.
func (r *finalizerReconciler) ensure(ctx context.Context, work *workv1alpha1.Work) error {
	if slices.Contains(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers":      append(slices.Clone(work.Finalizers), workv1alpha1.ExecutionControllerFinalizer),
		"resourceVersion": work.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	if _, err := r.patch(ctx, work, types.MergePatchType, patch); err != nil {
		return fmt.Errorf("adding finalizer: %w", err)
	}
	return nil
}

// remove removes the execution finalizer with a JSON patch that tests the
// entry it removes, so a concurrent change of the finalizers fails it
// rather than being lost. A Work already gone is no error.
func (r *finalizerReconciler) remove(ctx context.Context, work *workv1alpha1.Work) error {
	i := slices.Index(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer)
	if i < 0 {
		return nil
	}
	path := fmt.Sprintf("/metadata/finalizers/%d", i)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": path, "value": workv1alpha1.ExecutionControllerFinalizer},
		{"op": "remove", "path": path},
	})
	if err != nil {
		return err
	}
	_, err = r.patch(ctx, work, types.JSONPatchType, patch)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	return nil
}
