package federatedhpa

import (
	"context"
	"errors"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestScaleReconciler(t *testing.T) {
	t.Parallel()
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	web := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	theScale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
	tests := []struct {
		name       string
		ref        autoscalingv2.CrossVersionObjectReference
		mappingErr error
		getErr     error
		wantGet    bool
		wantGVR    schema.GroupVersionResource
		wantErr    string
	}{
		{name: "mapped and read", ref: web, wantGet: true, wantGVR: deployments},
		{name: "bad apiVersion: no mapping asked, no request", ref: autoscalingv2.CrossVersionObjectReference{APIVersion: "a/b/c", Kind: "Deployment", Name: "web"},
			wantErr: "unexpected GroupVersion string: a/b/c"},
		{name: "unknown kind: no request", ref: web, mappingErr: errors.New("no matches"),
			wantErr: "unable to determine resource for scale target reference: no matches"},
		{name: "scale not read: the resource still returned", ref: web, getErr: errors.New("boom"), wantGet: true, wantGVR: deployments,
			wantErr: "unable to get scale for target Deployment default/web: boom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := false
			r := scaleReconciler{
				restMapping: func(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
					if gk != (schema.GroupKind{Group: "apps", Kind: "Deployment"}) || len(versions) != 1 || versions[0] != "v1" {
						t.Errorf("mapping asked for %v %v", gk, versions)
					}
					if tc.mappingErr != nil {
						return nil, tc.mappingErr
					}
					return &meta.RESTMapping{Resource: deployments}, nil
				},
				get: func(_ context.Context, namespace string, resource schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
					got = true
					if namespace != "default" || resource != deployments.GroupResource() || name != "web" {
						t.Errorf("scale of %s %s/%s read", resource, namespace, name)
					}
					if tc.getErr != nil {
						return nil, tc.getErr
					}
					return theScale, nil
				},
			}
			gvr, sc, err := r.reconcile(context.Background(), "default", tc.ref)
			if got != tc.wantGet {
				t.Errorf("scale read = %v, want %v", got, tc.wantGet)
			}
			if gvr != tc.wantGVR {
				t.Errorf("resource %v, want %v", gvr, tc.wantGVR)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || sc != nil {
					t.Errorf("got scale %v error %v, want error %q", sc, err, tc.wantErr)
				}
				return
			}
			if err != nil || sc != theScale {
				t.Errorf("got scale %v error %v, want the scale read", sc, err)
			}
		})
	}
}
