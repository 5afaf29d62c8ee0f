package federatedhpa

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/podautoscaler"
)

// rescaleReconciler sets the target's replicas when the algorithm says so.
type rescaleReconciler struct {
	// patch merge-patches the scale subresource of namespace/name of
	// resource.
	patch func(ctx context.Context, namespace string, resource schema.GroupVersionResource, name string, patch []byte) error
}

// reconcile patches the scale to rec.DesiredReplicas when rec.Rescale is
// set, and records the outcome in rec (and the rescale in h); it makes no
// request otherwise.
func (r *rescaleReconciler) reconcile(ctx context.Context, namespace string, resource schema.GroupVersionResource, name string,
	rec *podautoscaler.Recommendation, h *podautoscaler.History, now time.Time) {
	if !rec.Rescale {
		return
	}
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, rec.DesiredReplicas)
	if err := r.patch(ctx, namespace, resource, name, patch); err != nil {
		rec.RescaleFailed(err, now)
		return
	}
	rec.Rescaled(h, now)
}
