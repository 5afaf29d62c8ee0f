package deploymentreplicassyncer

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/interpreter"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "deploymentReplicasSyncer"

// Controller copies aggregated replicas into labelled Deployment templates.
type Controller struct {
	informer    cache.SharedIndexInformer
	deployments appslisters.DeploymentLister
	rbs         worklisters.ResourceBindingLister
	synced      []cache.InformerSynced
	host        kubernetes.Interface
	queue       workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller. host reaches the host's Deployment templates;
// rbs are the ResourceBindings of flotilla-apiserver.
//
// The controller watches Deployments with its own informer, selecting only
// those labelled retain-replicas=true: Deployments without the label are
// never cached, and a Deployment gaining the label arrives as an add.
// Run starts that informer.
func New(host kubernetes.Interface, rbs workinformers.ResourceBindingInformer) (*Controller, error) {
	inf := appsinformers.NewFilteredDeploymentInformer(host, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, func(o *metav1.ListOptions) {
			o.LabelSelector = interpreter.RetainReplicasLabel + "=" + interpreter.RetainReplicasValue
		})
	if err := inf.SetTransform(strip); err != nil {
		return nil, err
	}
	c := &Controller{
		informer: inf, deployments: appslisters.NewDeploymentLister(inf.GetIndexer()), rbs: rbs.Lister(),
		synced: []cache.InformerSynced{inf.HasSynced, rbs.Informer().HasSynced},
		host:   host, queue: worker.NewQueue(ControllerName),
	}
	add := worker.EnqueueKey(c.queue)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		// Karmada ignores creations; here an add is also a Deployment that
		// just gained the label (which Karmada reconciles) or one listed at
		// start, caught up after a restart.
		AddFunc: add,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*appsv1.Deployment)
			n, ok2 := obj.(*appsv1.Deployment)
			if ok1 && ok2 && replicasChanged(o, n) {
				add(obj)
			}
		},
	}); err != nil {
		return nil, err
	}
	// decide reads the Deployment and its binding only: a Deployment
	// waiting for its members' status is looked at again when either
	// changes (Karmada polls every second instead).
	onBinding := func(obj any) {
		rb, ok := obj.(*workv1alpha2.ResourceBinding)
		if !ok || rb.Spec.Resource.Kind != "Deployment" || rb.Spec.Resource.APIVersion != "apps/v1" {
			return
		}
		if _, err := c.deployments.Deployments(rb.Namespace).Get(rb.Spec.Resource.Name); err == nil {
			c.queue.Add(rb.Namespace + "/" + rb.Spec.Resource.Name)
		}
	}
	if _, err := rbs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onBinding, UpdateFunc: func(_, obj any) { onBinding(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	go c.informer.RunWithContext(ctx)
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// replicasChanged is Karmada's update predicate: the Deployment just got
// the label, or its spec or status replicas changed.
func replicasChanged(old, obj *appsv1.Deployment) bool {
	if obj.Labels[interpreter.RetainReplicasLabel] != interpreter.RetainReplicasValue {
		return false
	}
	if old.Labels[interpreter.RetainReplicasLabel] != interpreter.RetainReplicasValue {
		return true
	}
	if old.Spec.Replicas == nil || obj.Spec.Replicas == nil {
		return false
	}
	return *old.Spec.Replicas != *obj.Spec.Replicas || old.Status.Replicas != obj.Status.Replicas
}

// strip drops what the controller never reads from the cached Deployments:
// managed fields and the pod template.
func strip(obj any) (any, error) {
	if d, ok := obj.(*appsv1.Deployment); ok {
		d.ManagedFields = nil
		d.Spec.Template = corev1.PodTemplateSpec{}
	}
	return obj, nil
}
