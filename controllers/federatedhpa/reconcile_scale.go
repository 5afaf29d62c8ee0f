package federatedhpa

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// scaleReconciler reads the target's scale subresource on the host.
type scaleReconciler struct {
	// restMapping maps the target's kind to its resource.
	restMapping func(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
	// get reads the scale subresource of namespace/name of resource.
	get func(ctx context.Context, namespace string, resource schema.GroupResource, name string) (*autoscalingv1.Scale, error)
}

// reconcile returns the target's resource and its scale. Its errors are
// the messages of the FailedGetScale event and condition.
func (r *scaleReconciler) reconcile(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference) (schema.GroupVersionResource, *autoscalingv1.Scale, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, nil, err
	}
	mapping, err := r.restMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return schema.GroupVersionResource{}, nil, fmt.Errorf("unable to determine resource for scale target reference: %w", err)
	}
	gvr := mapping.Resource
	sc, err := r.get(ctx, namespace, gvr.GroupResource(), ref.Name)
	if err != nil {
		return gvr, nil, fmt.Errorf("unable to get scale for target %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
	}
	return gvr, sc, nil
}
