package federatedhpa

import (
	"context"
	"encoding/json"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// statusReconciler writes a FederatedHPA's status.
type statusReconciler struct {
	// patch merge-patches the status subresource of namespace/name.
	patch func(ctx context.Context, namespace, name string, patch []byte) error
}

// reconcile writes status with one merge patch, none when it equals the
// stored one. A FederatedHPA deleted meanwhile is not an error.
func (r *statusReconciler) reconcile(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA, status autoscalingv2.HorizontalPodAutoscalerStatus) error {
	if apiequality.Semantic.DeepEqual(fhpa.Status, status) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	if err := r.patch(ctx, fhpa.Namespace, fhpa.Name, patch); !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
