package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/placement"
)

// quotaRefused handles a scheduling result flotilla-apiserver refused
// because it would exceed a FederatedResourceQuota (refusal, a 403 of
// reason QuotaExceeded; the cache checkQuotas read was behind, or another
// binding took the headroom first). The binding keeps its spec.clusters
// (none for a new binding, the old replicas for a scale-up): only its
// Scheduled condition becomes False with reason QuotaExceeded and the
// refusal's message, and ScheduleBindingFailed is recorded on the binding
// and its template, as for a refusal checkQuotas foresees. The binding is
// tried again later.
func (c *Controller) quotaRefused(ctx context.Context, t *target, key string, dec placement.Decision, refusal error) error {
	msg := refusal.Error()
	var status apierrors.APIStatus
	if errors.As(refusal, &status) {
		msg = status.Status().Message
	}
	schedErr := &placement.Error{Reason: workv1alpha2.BindingReasonQuotaExceeded, Message: msg}
	klog.FromContext(ctx).V(2).Info("Scheduling result refused by a FederatedResourceQuota", "binding", key, "result", dec.Clusters, "message", msg)
	old := meta.FindStatusCondition(t.status.Conditions, workv1alpha2.Scheduled)
	if old != nil && old.Status == metav1.ConditionFalse && old.Reason == schedErr.Reason && old.Message == msg {
		return c.retryLater(key, schedErr)
	}
	conditions := slices.Clone(t.status.Conditions)
	meta.SetStatusCondition(&conditions, metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
		Reason: schedErr.Reason, Message: msg, ObservedGeneration: t.meta.Generation, LastTransitionTime: metav1.NewTime(c.now())})
	if err := c.patchStatus(ctx, t, t.meta.ResourceVersion, map[string]any{"conditions": conditions}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writing the Scheduled condition: %w", err)
	}
	c.written.Record(key, t.meta.ResourceVersion, struct{}{})
	c.record(t, dec, schedErr)
	return c.retryLater(key, schedErr)
}
