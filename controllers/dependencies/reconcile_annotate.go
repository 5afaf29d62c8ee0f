package dependencies

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// annotateReconciler records a binding's dependencies on it.
type annotateReconciler struct {
	// patch merge-patches a binding.
	patch func(ctx context.Context, namespace, name string, patch []byte) error
}

// reconcile sets the dependencies annotation of rb to deps (removes it
// when there are none); nothing is written when it holds them already.
// wrote tells whether dependencies were recorded.
func (r *annotateReconciler) reconcile(ctx context.Context, rb *workv1alpha2.ResourceBinding, deps []dependency) (bool, error) {
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
	err := r.patch(ctx, rb.Namespace, rb.Name, patch)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && value != nil, err
}
