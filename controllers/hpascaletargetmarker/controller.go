package hpascaletargetmarker

import (
	"context"
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/dynamic"
	autoscalinginformers "k8s.io/client-go/informers/autoscaling/v2"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/controllers/internal/worker"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "hpaScaleTargetMarker"

// Controller labels the scale targets of propagated HPAs.
type Controller struct {
	hpas   autoscalinglisters.HorizontalPodAutoscalerLister
	synced []cache.InformerSynced
	client dynamic.Interface
	mapper meta.RESTMapper
	// queue holds targets, not HPAs (see targetKey): the HPA that asked
	// for a change may be gone by the time the key is processed.
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller. hpas watches the host's HPA templates;
// client and mapper reach their scale targets, of any kind, on the host.
func New(hpas autoscalinginformers.HorizontalPodAutoscalerInformer, client dynamic.Interface, mapper meta.RESTMapper) (*Controller, error) {
	c := &Controller{
		hpas: hpas.Lister(), synced: []cache.InformerSynced{hpas.Informer().HasSynced},
		client: client, mapper: mapper, queue: worker.NewQueue(ControllerName),
	}
	// As Karmada: a propagated HPA marks its target when it appears or
	// its spec changes (Karmada also on status updates); a deleted HPA, or one now scaling another target, unmarks
	// the old target whether it was propagated or not.
	if _, err := hpas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok && propagated(hpa) {
				c.queue.Add(targetKey(mark, hpa.Namespace, hpa.Spec.ScaleTargetRef))
			}
		},
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*autoscalingv2.HorizontalPodAutoscaler)
			n, ok2 := obj.(*autoscalingv2.HorizontalPodAutoscaler)
			if !ok1 || !ok2 {
				return
			}
			if o.Spec.ScaleTargetRef != n.Spec.ScaleTargetRef {
				c.queue.Add(targetKey(unmark, o.Namespace, o.Spec.ScaleTargetRef))
			}
			// Status updates (every aggregation of the members' HPAs)
			// change nothing to mark: each would cost a GET of the target.
			changed := o.Generation != n.Generation || !propagated(o) || o.Spec.ScaleTargetRef != n.Spec.ScaleTargetRef
			if propagated(n) && changed {
				c.queue.Add(targetKey(mark, n.Namespace, n.Spec.ScaleTargetRef))
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if hpa, ok := obj.(*autoscalingv2.HorizontalPodAutoscaler); ok {
				c.queue.Add(targetKey(unmark, hpa.Namespace, hpa.Spec.ScaleTargetRef))
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// keySep separates the fields of a key; it cannot occur in an action,
// namespace, API version, kind or object name.
const keySep = "|"

// target is a queued change of the label on one scale target.
type target struct {
	action    action
	namespace string
	ref       autoscalingv2.CrossVersionObjectReference
}

// targetKey is the queue key of a change of the label on the target ref
// of an HPA in namespace.
func targetKey(a action, namespace string, ref autoscalingv2.CrossVersionObjectReference) string {
	return strings.Join([]string{string(a), namespace, ref.APIVersion, ref.Kind, ref.Name}, keySep)
}

func parseKey(key string) (target, error) {
	f := strings.Split(key, keySep)
	if len(f) != 5 || (action(f[0]) != mark && action(f[0]) != unmark) {
		return target{}, fmt.Errorf("malformed key %q", key)
	}
	return target{action: action(f[0]), namespace: f[1],
		ref: autoscalingv2.CrossVersionObjectReference{APIVersion: f[2], Kind: f[3], Name: f[4]}}, nil
}
