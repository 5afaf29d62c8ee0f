package descheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
)

// writeReconciler decides the binding's new clusters from the measurements
// and writes them.
type writeReconciler struct {
	// patch merge-patches a ResourceBinding.
	patch func(ctx context.Context, namespace, name string, body []byte) error
	// record records an event (record.EventRecorder.Event).
	record func(obj runtime.Object, eventtype, reason, message string)
}

// reconcile lowers rb's clusters as failover.Deschedule decides from
// measured: one merge patch of spec.clusters, guarded by the
// resourceVersion the decision was made on, and the outcome recorded on
// the binding and its template. Nothing is written when nothing is
// lowered. A conflict (the binding changed meanwhile) or a binding gone
// is not a failure: the first is retried on the new binding.
func (r *writeReconciler) reconcile(ctx context.Context, rb *workv1alpha2.ResourceBinding, measured map[string]failover.Measurement) error {
	clusters, lowered := failover.Deschedule(rb.Spec.Clusters, measured)
	if len(lowered) == 0 {
		return nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": rb.ResourceVersion},
		"spec":     map[string]any{"clusters": clusters},
	})
	if err != nil {
		return err
	}
	err = r.patch(ctx, rb.Namespace, rb.Name, body)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return err
	case err != nil:
		r.recordBoth(rb, corev1.EventTypeWarning, EventReasonDescheduleBindingFailed, err.Error())
		return fmt.Errorf("descheduling: %w", err)
	}
	msg := message(lowered)
	klog.FromContext(ctx).V(2).Info("Descheduled", "binding", klog.KObj(rb), "message", msg)
	r.recordBoth(rb, corev1.EventTypeNormal, EventReasonDescheduleBindingSucceed, msg)
	return nil
}

// recordBoth records an event on the binding and on its template.
func (r *writeReconciler) recordBoth(rb *workv1alpha2.ResourceBinding, eventtype, reason, msg string) {
	r.record(rb, eventtype, reason, msg)
	r.record(rb.Spec.Resource.EventTarget(), eventtype, reason, msg)
}

// message is Karmada's: the replicas taken off in all and per cluster.
func message(lowered []failover.Descheduled) string {
	var total int32
	var parts []string
	for _, l := range lowered {
		total += l.From - l.To
		parts = append(parts, fmt.Sprintf("%d replica(s) in cluster(%s)", l.From-l.To, l.Cluster))
	}
	return fmt.Sprintf("Binding has been descheduled, %d total descheduled replica(s), %s", total, strings.Join(parts, ", "))
}
