package federatedhpa

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

func TestStatusReconciler(t *testing.T) {
	t.Parallel()
	stored := autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2}
	changed := autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 4}
	tests := []struct {
		name      string
		status    autoscalingv2.HorizontalPodAutoscalerStatus
		patchErr  error
		wantPatch bool
		wantErr   bool
	}{
		{name: "unchanged: no request", status: stored},
		{name: "changed: one merge patch", status: changed, wantPatch: true},
		{name: "gone meanwhile: not an error", status: changed, wantPatch: true,
			patchErr: apierrors.NewNotFound(schema.GroupResource{Group: "autoscaling.karmada.io", Resource: "federatedhpas"}, "web")},
		{name: "patch failed: the error", status: changed, wantPatch: true, patchErr: errors.New("timeout"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := fhpa(func(h *autoscalingv1alpha1.FederatedHPA) { h.Status = stored })
			patched := false
			r := statusReconciler{patch: func(_ context.Context, namespace, name string, patch []byte) error {
				patched = true
				if namespace != "default" || name != "web" {
					t.Errorf("status of %s/%s patched", namespace, name)
				}
				var body struct {
					Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status"`
				}
				if err := json.Unmarshal(patch, &body); err != nil || body.Status.DesiredReplicas != tc.status.DesiredReplicas {
					t.Errorf("patch %s (%v), want the status", patch, err)
				}
				return tc.patchErr
			}}
			err := r.reconcile(context.Background(), h, tc.status)
			if patched != tc.wantPatch {
				t.Errorf("patched = %v, want %v", patched, tc.wantPatch)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want one: %v", err, tc.wantErr)
			}
		})
	}
}
