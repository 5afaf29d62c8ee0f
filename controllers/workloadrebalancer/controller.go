package workloadrebalancer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	appsinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/apps/v1alpha1"
	appslisters "github.com/flotilla-io/flotilla/apis/generated/listers/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "workloadRebalancer"

// Bindings is what the controller does to the bindings of workloads.
type Bindings struct {
	// Triggered returns the spec.rescheduleTriggeredAt of the binding (a
	// ResourceBinding in namespace, or a ClusterResourceBinding when
	// namespace is empty); a NotFound error when there is none.
	Triggered func(ctx context.Context, namespace, name string) (*metav1.Time, error)
	// Trigger sets spec.rescheduleTriggeredAt.
	Trigger func(ctx context.Context, namespace, name string, at metav1.Time) error
}

// Controller runs WorkloadRebalancers.
type Controller struct {
	rebalancers appslisters.WorkloadRebalancerLister
	synced      []cache.InformerSynced
	bindings    Bindings
	// patchStatus writes a rebalancer's status; remove deletes it if it
	// is still at resourceVersion.
	patchStatus func(ctx context.Context, name string, body []byte) error
	remove      func(ctx context.Context, name, resourceVersion string) error
	queue       workqueue.TypedRateLimitingInterface[string]
	now         func() time.Time
}

// New returns the controller. Bindings are read from the server (a
// rebalancer is rare; a binding created a moment ago must not be reported
// missing from a lagging cache).
func New(rebalancers appsinformers.WorkloadRebalancerInformer, client versioned.Interface) (*Controller, error) {
	opts := metav1.PatchOptions{FieldManager: ControllerName}
	c := &Controller{
		rebalancers: rebalancers.Lister(), synced: []cache.InformerSynced{rebalancers.Informer().HasSynced},
		bindings: Bindings{
			Triggered: func(ctx context.Context, namespace, name string) (*metav1.Time, error) {
				if namespace == "" {
					b, err := client.WorkV1alpha2().ClusterResourceBindings().Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return nil, err
					}
					return b.Spec.RescheduleTriggeredAt, nil
				}
				b, err := client.WorkV1alpha2().ResourceBindings(namespace).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return nil, err
				}
				return b.Spec.RescheduleTriggeredAt, nil
			},
			Trigger: func(ctx context.Context, namespace, name string, at metav1.Time) error {
				body, err := json.Marshal(map[string]any{"spec": map[string]any{"rescheduleTriggeredAt": at}})
				if err != nil {
					return err
				}
				if namespace == "" {
					_, err = client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, name, types.MergePatchType, body, opts)
				} else {
					_, err = client.WorkV1alpha2().ResourceBindings(namespace).Patch(ctx, name, types.MergePatchType, body, opts)
				}
				return err
			},
		},
		patchStatus: func(ctx context.Context, name string, body []byte) error {
			_, err := client.AppsV1alpha1().WorkloadRebalancers().Patch(ctx, name, types.MergePatchType, body, opts, "status")
			return err
		},
		remove: func(ctx context.Context, name, rv string) error {
			err := client.AppsV1alpha1().WorkloadRebalancers().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr.To(rv)}})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		queue: worker.NewQueue(ControllerName), now: time.Now,
	}
	enqueue := worker.EnqueueKey(c.queue)
	if _, err := rebalancers.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			// Our own status writes come back here: only spec changes
			// (and the TTL timer) need another pass.
			if old.(*appsv1alpha1.WorkloadRebalancer).Generation != cur.(*appsv1alpha1.WorkloadRebalancer).Generation {
				enqueue(cur)
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

func (c *Controller) reconcile(ctx context.Context, name string) error {
	r, err := c.rebalancers.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if r.DeletionTimestamp != nil {
		return nil
	}
	status := appsv1alpha1.WorkloadRebalancerStatus{ObservedWorkloads: Observe(r), ObservedGeneration: r.Generation, FinishTime: r.Status.FinishTime}
	retry := 0
	for i, o := range status.ObservedWorkloads {
		if !pending(o) {
			continue
		}
		if err := c.trigger(ctx, r, o.Workload); apierrors.IsNotFound(err) {
			status.ObservedWorkloads[i].Result, status.ObservedWorkloads[i].Reason = appsv1alpha1.RebalanceFailed, appsv1alpha1.RebalanceObjectNotFound
		} else if err != nil {
			retry++
		} else {
			status.ObservedWorkloads[i].Result = appsv1alpha1.RebalanceSuccessful
		}
	}
	if !apiequality.Semantic.DeepEqual(status, r.Status) {
		if retry == 0 {
			status.FinishTime = ptr.To(metav1.NewTime(c.now()))
		} else {
			status.FinishTime = nil
		}
		body, err := json.Marshal(map[string]any{"status": status})
		if err != nil {
			return err
		}
		if err := c.patchStatus(ctx, name, body); err != nil {
			return err
		}
	}
	if retry > 0 {
		return fmt.Errorf("%d workloads of rebalancer %s could not be rescheduled yet", retry, name)
	}
	if r.Spec.TTLSecondsAfterFinished == nil || status.FinishTime == nil {
		return nil
	}
	if left := status.FinishTime.Add(time.Duration(*r.Spec.TTLSecondsAfterFinished) * time.Second).Sub(c.now()); left > 0 {
		c.queue.AddAfter(name, left)
		return nil
	}
	return c.remove(ctx, name, r.ResourceVersion)
}

// trigger makes the binding of w reschedule, once per rebalancer: only
// when its last trigger is older than the rebalancer. As Karmada, the
// trigger is the rebalancer's creation time itself (scripts compare the
// two); the scheduler honours one in the same second as its last run (see
// the binding annotation work.flotilla.io/observed-reschedule-trigger).
func (c *Controller) trigger(ctx context.Context, r *appsv1alpha1.WorkloadRebalancer, w appsv1alpha1.ObjectReference) error {
	binding := names.BindingName(w.Kind, w.Name)
	triggered, err := c.bindings.Triggered(ctx, w.Namespace, binding)
	if err != nil {
		return err
	}
	if triggered != nil && !r.CreationTimestamp.After(triggered.Time) {
		return nil
	}
	return c.bindings.Trigger(ctx, w.Namespace, binding, r.CreationTimestamp)
}
