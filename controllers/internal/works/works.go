// Package works writes the Works a controller derives from its objects:
// create when absent, patch only what differs, nothing while one is being
// deleted. The binding, namespace and unified-auth controllers share it.
package works

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/objectmeta"
)

// droppable are annotations a controller may stop setting: a stored Work
// keeping one is out of date.
var droppable = []string{policyv1alpha1.AppliedOverridesAnnotation, policyv1alpha1.AppliedClusterOverridesAnnotation}

// Differs tells whether the stored Work must be patched to desired: a label
// or annotation of desired it lacks or holds otherwise, a droppable
// annotation desired no longer has, the execution finalizer missing, or
// another spec.
func Differs(stored, desired *workv1alpha1.Work) bool {
	if !objectmeta.Covers(stored, desired) {
		return true
	}
	for _, k := range droppable {
		if _, ok := desired.Annotations[k]; !ok {
			if _, had := stored.Annotations[k]; had {
				return true
			}
		}
	}
	if !slices.Contains(stored.Finalizers, workv1alpha1.ExecutionControllerFinalizer) && stored.DeletionTimestamp == nil {
		return true
	}
	a, _ := json.Marshal(stored.Spec)
	b, _ := json.Marshal(desired.Spec)
	return string(a) != string(b)
}

// Patch is the merge patch turning stored into desired: labels and
// annotations are merged (droppable ones desired lacks removed), the spec
// replaced, the execution finalizer added when missing.
func Patch(stored, desired *workv1alpha1.Work) ([]byte, error) {
	annos := map[string]any{}
	for k, v := range desired.Annotations {
		annos[k] = v
	}
	for _, k := range droppable {
		if _, ok := desired.Annotations[k]; !ok {
			if _, had := stored.Annotations[k]; had {
				annos[k] = nil
			}
		}
	}
	spec := map[string]any{
		"workload":                    desired.Spec.Workload,
		"suspendDispatching":          desired.Spec.SuspendDispatching,
		"preserveResourcesOnDeletion": desired.Spec.PreserveResourcesOnDeletion,
	}
	meta := map[string]any{"annotations": annos}
	if len(desired.Labels) > 0 {
		meta["labels"] = desired.Labels // merged: the stored permanent id stays
	}
	if !slices.Contains(stored.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		meta["finalizers"] = append(append([]string(nil), stored.Finalizers...), workv1alpha1.ExecutionControllerFinalizer)
		meta["resourceVersion"] = stored.ResourceVersion
	}
	return json.Marshal(map[string]any{"metadata": meta, "spec": spec})
}

// Needless tells whether the stored Work cur (nil when the cache has none)
// needs no write to become desired: it matches, or it is being deleted and
// is re-created once gone (its deletion re-queues the caller).
func Needless(cur, desired *workv1alpha1.Work) bool {
	return cur != nil && (cur.DeletionTimestamp != nil || !Differs(cur, desired))
}

// Write creates desired when cur is nil, or patches cur to desired, and
// returns the Work as stored.
func Write(ctx context.Context, client versioned.Interface, cur, desired *workv1alpha1.Work, fieldManager string) (*workv1alpha1.Work, error) {
	works := client.WorkV1alpha1().Works(desired.Namespace)
	if cur == nil {
		w, err := works.Create(ctx, desired, metav1.CreateOptions{FieldManager: fieldManager})
		if apierrors.IsAlreadyExists(err) {
			err = fmt.Errorf("work %s/%s exists but is not in the cache yet", desired.Namespace, desired.Name)
		}
		return w, err
	}
	patch, err := Patch(cur, desired)
	if err != nil {
		return nil, err
	}
	return works.Patch(ctx, cur.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
}

// Ensure makes the stored Work cur match desired, writing only when needed.
func Ensure(ctx context.Context, client versioned.Interface, cur, desired *workv1alpha1.Work, fieldManager string) error {
	if Needless(cur, desired) {
		return nil
	}
	_, err := Write(ctx, client, cur, desired, fieldManager)
	return err
}
