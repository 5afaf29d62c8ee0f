package federatedhpa

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/podautoscaler"
)

func TestRescaleReconciler(t *testing.T) {
	t.Parallel()
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	tests := []struct {
		name     string
		rescale  bool
		patchErr error
		// wantPatches are the scale patches made.
		wantPatches []string
		// wantAbleToScale is the AbleToScale condition set, "" for none.
		wantAbleToScale string
		wantEvents      []string
		// wantLastScale: the status' lastScaleTime is set.
		wantLastScale bool
		wantDesired   int32
	}{
		{name: "no rescale: no request", wantDesired: 2},
		{name: "rescaled: SucceededRescale, recorded", rescale: true, wantPatches: []string{`{"spec":{"replicas":4}}`},
			wantAbleToScale: "True SucceededRescale: the HPA controller was able to update the target scale to 4",
			wantEvents:      []string{"Normal SuccessfulRescale New size: 4; reason: cpu above target"},
			wantLastScale:   true, wantDesired: 4},
		{name: "patch failed: FailedUpdateScale, not recorded", rescale: true, patchErr: errors.New("conflict"), wantPatches: []string{`{"spec":{"replicas":4}}`},
			wantAbleToScale: "False FailedUpdateScale: the HPA controller was unable to update the target scale: conflict",
			wantEvents:      []string{"Warning FailedRescale New size: 4; reason: cpu above target; error: conflict"},
			wantDesired:     2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var patches []string
			r := rescaleReconciler{patch: func(_ context.Context, namespace string, resource schema.GroupVersionResource, name string, patch []byte) error {
				if namespace != "default" || resource != deployments || name != "web" {
					t.Errorf("scale of %s %s/%s patched", resource, namespace, name)
				}
				patches = append(patches, string(patch))
				return tc.patchErr
			}}
			rec := podautoscaler.Recommendation{CurrentReplicas: 2, DesiredReplicas: 4, Rescale: tc.rescale, Reason: "cpu above target",
				Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 2, DesiredReplicas: 2}}
			if !tc.rescale {
				rec.DesiredReplicas = 2
			}
			h := &podautoscaler.History{}
			r.reconcile(context.Background(), "default", deployments, "web", &rec, h, fixedNow)
			if diff := cmp.Diff(tc.wantPatches, patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
			if got := condition(&rec.Status, autoscalingv2.AbleToScale); got != tc.wantAbleToScale {
				t.Errorf("AbleToScale %q, want %q", got, tc.wantAbleToScale)
			}
			var events []string
			for _, e := range rec.Events {
				events = append(events, e.Type+" "+e.Reason+" "+e.Message)
			}
			if diff := cmp.Diff(tc.wantEvents, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if rec.Status.DesiredReplicas != tc.wantDesired {
				t.Errorf("status desiredReplicas %d, want %d", rec.Status.DesiredReplicas, tc.wantDesired)
			}
			if (rec.Status.LastScaleTime != nil) != tc.wantLastScale {
				t.Errorf("lastScaleTime %v, want set %v", rec.Status.LastScaleTime, tc.wantLastScale)
			}
		})
	}
}
