package dependencies

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// releaseReconciler frees the attached bindings a binding no longer
// depends on.
type releaseReconciler struct {
	// bindings: list, get, patch and delete.
	bindings bindingAPI
}

// reconcile removes the binding ns/name from the attached bindings it no
// longer depends on (all but keep); attached bindings required by nobody
// and not claimed by a policy of their own are deleted.
func (r *releaseReconciler) reconcile(ctx context.Context, ns, name string, keep map[string]bool) error {
	label := DependedByLabel(ns, name)
	req, err := labels.NewRequirement(label, selection.Exists, nil)
	if err != nil {
		return err
	}
	list, err := r.bindings.list(ns, labels.NewSelector().Add(*req))
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
			if err := r.bindings.delete(ctx, ns, a.Name); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		spec := map[string]any{"requiredBy": required}
		// The policies of the remaining requirers decide now: a conflict
		// may be gone.
		if merged, _, own := attachedPolicy(r.bindings.get, a, required, nil); own {
			spec["conflictResolution"] = merged.ConflictResolution
			spec["preserveResourcesOnDeletion"] = merged.PreserveResourcesOnDeletion
		}
		// Conditional on the cached copy, as attach's (requiredBy is replaced whole).
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{label: nil}, "resourceVersion": a.ResourceVersion}, "spec": spec})
		if err := r.bindings.patch(ctx, ns, a.Name, patch); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
