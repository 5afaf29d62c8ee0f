package cronfederatedhpa

import (
	"context"
	"errors"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	autoscalinginformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/autoscaling/v1alpha1"
	autoscalinglisters "github.com/flotilla-io/flotilla/apis/generated/listers/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "cronFederatedHPA"

// FieldManager is the field manager of the controller's writes: the
// status of CronFederatedHPAs, the bounds of FederatedHPAs and the scale
// of workloads.
const FieldManager = "flotilla-cronfederatedhpa"

// Reasons of the events recorded on a CronFederatedHPA. The Warning ones
// are Karmada's (pkg/events); Karmada records nothing on success, so
// ScaleSucceed is Flotilla's, named after Karmada's <Action>Succeed.
const (
	// EventReasonScaleFailed (Warning): an execution of a rule failed.
	EventReasonScaleFailed = "ScaleFailed"
	// EventReasonScaleSucceed (Normal): an execution of a rule succeeded.
	EventReasonScaleSucceed = "ScaleSucceed"
	// EventReasonStartRuleFailed (Warning): a rule's schedule or time zone
	// cannot be planned.
	EventReasonStartRuleFailed = "StartRuleFailed"
	// EventReasonUpdateStatusFailed (Warning): executions could not be
	// recorded in the status.
	EventReasonUpdateStatusFailed = "UpdateStatusFailed"
	// EventReasonUpdateCronFederatedHPAFailed (Warning): the next execution
	// times of newly planned rules could not be written.
	EventReasonUpdateCronFederatedHPAFailed = "UpdateCronFederatedHPAFailed"
)

// Controller is the CronFederatedHPA controller.
type Controller struct {
	lister  autoscalinglisters.CronFederatedHPALister
	synced  cache.InformerSynced
	queue   workqueue.TypedRateLimitingInterface[string]
	planner *planner
	exec    *executor

	// getCronFHPA reads a CronFederatedHPA from flotilla-apiserver,
	// bypassing the cache (after a conflict).
	getCronFHPA func(ctx context.Context, namespace, name string) (*autoscalingv1alpha1.CronFederatedHPA, error)
	// patchStatus merge-patches the status subresource of a CronFederatedHPA.
	patchStatus func(ctx context.Context, namespace, name string, patch []byte) error

	recorder record.EventRecorder
	now      func() time.Time
}

// New returns the controller. client reaches flotilla-apiserver (the
// CronFederatedHPAs and the FederatedHPAs they scale); scales and mapper
// reach the scale subresource of workload templates in the host; events go
// to recorder; now is the clock (time.Now when nil). Rules without a
// timeZone follow the process's local time zone, as in Karmada.
func New(cronFHPAs autoscalinginformers.CronFederatedHPAInformer, client versioned.Interface, scales scale.ScalesGetter,
	mapper meta.RESTMapper, recorder record.EventRecorder, now func() time.Time) (*Controller, error) {
	if client == nil || scales == nil || mapper == nil || recorder == nil {
		return nil, errors.New("cronfederatedhpa: client, scales, mapper and recorder are required")
	}
	if now == nil {
		now = time.Now
	}
	c := &Controller{
		lister:   cronFHPAs.Lister(),
		synced:   cronFHPAs.Informer().HasSynced,
		queue:    worker.NewQueue(ControllerName),
		recorder: recorder,
		now:      now,
		exec: &executor{
			patchFederatedHPA: func(ctx context.Context, namespace, name string, patch []byte) error {
				_, err := client.AutoscalingV1alpha1().FederatedHPAs(namespace).Patch(ctx, name, types.MergePatchType, patch,
					metav1.PatchOptions{FieldManager: FieldManager})
				return err
			},
			resourceFor: resourceFor(mapper),
			getScale: func(ctx context.Context, namespace string, gr schema.GroupResource, name string) (*autoscalingv1.Scale, error) {
				return scales.Scales(namespace).Get(ctx, gr, name, metav1.GetOptions{})
			},
			updateScale: func(ctx context.Context, namespace string, gr schema.GroupResource, s *autoscalingv1.Scale) error {
				_, err := scales.Scales(namespace).Update(ctx, gr, s, metav1.UpdateOptions{FieldManager: FieldManager})
				return err
			},
		},
		getCronFHPA: func(ctx context.Context, namespace, name string) (*autoscalingv1alpha1.CronFederatedHPA, error) {
			return client.AutoscalingV1alpha1().CronFederatedHPAs(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		patchStatus: func(ctx context.Context, namespace, name string, patch []byte) error {
			_, err := client.AutoscalingV1alpha1().CronFederatedHPAs(namespace).Patch(ctx, name, types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: FieldManager}, "status")
			return err
		},
	}
	c.planner = newPlanner(now, time.Local, c.queue.Add)

	add := worker.EnqueueKey(c.queue)
	if _, err := cronFHPAs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add,
		UpdateFunc: func(old, obj any) {
			o, n := old.(*autoscalingv1alpha1.CronFederatedHPA), obj.(*autoscalingv1alpha1.CronFederatedHPA)
			// The controller's own status writes change neither.
			if o.Generation != n.Generation || o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				add(obj)
			}
		},
		DeleteFunc: add,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run plans and executes the rules until ctx ends; workers reconcile
// CronFederatedHPAs (planning on spec changes, executing due rules).
func (c *Controller) Run(ctx context.Context, workers int) {
	go c.planner.run(ctx)
	worker.Run(ctx, c.queue, []cache.InformerSynced{c.synced}, workers, c.reconcile)
}

// resourceFor maps kinds with mapper, refreshing a resettable (discovery)
// mapper once when the kind is unknown: its CRD may be newer than the cache.
func resourceFor(mapper meta.RESTMapper) func(schema.GroupVersionKind) (schema.GroupResource, error) {
	return func(gvk schema.GroupVersionKind) (schema.GroupResource, error) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if r, ok := mapper.(meta.ResettableRESTMapper); ok && meta.IsNoMatchError(err) {
			r.Reset()
			m, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		}
		if err != nil {
			return schema.GroupResource{}, err
		}
		return m.Resource.GroupResource(), nil
	}
}
