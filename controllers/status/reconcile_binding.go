package status

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// syncBindingStatus writes items and the FullyApplied condition to the
// binding's status subresource when they differ from the stored ones. The
// JSON merge patch carries the whole conditions list (merge patches replace
// lists), the other conditions as read, and the resourceVersion read, so a
// concurrent write by the scheduler is never lost: it conflicts and the key
// is retried with fresh data. Events go to the binding and the template.
func (c *Controller) syncBindingStatus(ctx context.Context, b *binding, tmpl runtime.Object, items []workv1alpha2.AggregatedStatusItem, drifted *metav1.Condition) error {
	cond := fullyAppliedCondition(b.spec, b.meta.Generation, items)
	storedDrift := meta.FindStatusCondition(b.status.Conditions, workv1alpha1.WorkDrifted)
	if itemsEqual(b.status.AggregatedStatus, items) && conditionEqual(meta.FindStatusCondition(b.status.Conditions, workv1alpha2.FullyApplied), &cond) &&
		(drifted == nil || (conditionEqual(storedDrift, drifted) && storedDrift.LastTransitionTime.Equal(&drifted.LastTransitionTime))) {
		klog.FromContext(ctx).V(4).Info("Aggregated status is up to date")
		return nil
	}
	conditions := slices.Clone(b.status.Conditions)
	cond.LastTransitionTime = metav1.NewTime(c.now())
	meta.SetStatusCondition(&conditions, cond)
	if drifted != nil {
		// The Works' time of the last drift, not the time of this write.
		meta.RemoveStatusCondition(&conditions, workv1alpha1.WorkDrifted)
		conditions = append(conditions, *drifted)
	}
	var aggregated any // null removes the field
	if len(items) > 0 {
		aggregated = items
	}
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": b.meta.ResourceVersion},
		"status":   map[string]any{"aggregatedStatus": aggregated, "conditions": conditions},
	})
	if err != nil {
		return fmt.Errorf("encoding status patch of %s: %w", b.describe, err)
	}
	rv, stored, err := b.patchStatus(ctx, patch)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		// A conflict is retried at once with fresh data; not worth an event.
		if !apierrors.IsConflict(err) {
			c.event(b.obj, tmpl, corev1.EventTypeWarning, EventReasonAggregateStatusFailed, err.Error())
		}
		return fmt.Errorf("patching status of %s: %w", b.describe, err)
	}
	c.written.Record(b.key, b.meta.ResourceVersion, written{rv: rv, status: stored})
	klog.FromContext(ctx).V(2).Info("Updated aggregated status", "clusters", len(items), "fullyApplied", cond.Status)
	msg := fmt.Sprintf("Update %s with AggregatedStatus successfully.", b.describe)
	c.event(b.obj, tmpl, corev1.EventTypeNormal, EventReasonAggregateStatusSucceed, msg)
	return nil
}

// event records an event on the binding and on the template, when given.
func (c *Controller) event(binding, tmpl runtime.Object, eventType, reason, message string) {
	for _, obj := range []runtime.Object{binding, tmpl} {
		if obj != nil && !reflect.ValueOf(obj).IsNil() {
			c.recorder.Event(obj, eventType, reason, message)
		}
	}
}
