// Package cluster runs the lifecycle of Cluster objects: the finalizer, the
// execution namespace karmada-es-<cluster> on the host, the not-ready and
// unreachable taints that follow the Ready condition, and cleanup on delete.
package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "cluster"

const (
	// Finalizer keeps a Cluster until its execution namespace is gone.
	Finalizer = "karmada.io/cluster-controller"
)

// Controller reconciles Clusters.
type Controller struct {
	clusters clusterlisters.ClusterLister
	synced   cache.InformerSynced
	client   versioned.Interface
	host     kubernetes.Interface
	// memberCleanup removes from the member what the control plane itself
	// created there (the impersonation RBAC); nil skips it.
	memberCleanup func(ctx context.Context, cluster *clusterv1alpha1.Cluster) error
	queue         workqueue.TypedRateLimitingInterface[string]
	now           func() time.Time
	recorder      record.EventRecorder
}

// Event reasons on Clusters, Karmada's (docs/compatibility.md, Events).
const (
	EventReasonCreateExecutionSpaceSucceed = "CreateExecutionSpaceSucceed"
	EventReasonCreateExecutionSpaceFailed  = "CreateExecutionSpaceFailed"
	EventReasonRemoveExecutionSpaceSucceed = "RemoveExecutionSpaceSucceed"
	EventReasonRemoveExecutionSpaceFailed  = "RemoveExecutionSpaceFailed"
)

// New returns the controller.
func New(informer clusterinformers.ClusterInformer, client versioned.Interface, host kubernetes.Interface,
	memberCleanup func(context.Context, *clusterv1alpha1.Cluster) error, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		recorder:      recorder,
		memberCleanup: memberCleanup,
		clusters:      informer.Lister(),
		synced:        informer.Informer().HasSynced,
		client:        client,
		host:          host,
		queue:         worker.NewQueue(ControllerName),
		now:           time.Now,
	}
	enqueue := worker.EnqueueKey(c.queue)
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, cur any) { enqueue(cur) }, DeleteFunc: enqueue,
	})
	return c, err
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, []cache.InformerSynced{c.synced}, workers, c.reconcile)
}

func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cluster.DeletionTimestamp != nil {
		return c.remove(ctx, cluster)
	}
	if !slices.Contains(cluster.Finalizers, Finalizer) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"finalizers": append(slices.Clone(cluster.Finalizers), Finalizer), "resourceVersion": cluster.ResourceVersion}})
		if _, err := c.client.ClusterV1alpha1().Clusters().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName}); err != nil {
			return fmt.Errorf("adding finalizer: %w", err)
		}
	}
	if err := c.ensureExecutionNamespace(ctx, cluster); err != nil {
		return err
	}
	return c.syncTaints(ctx, cluster)
}

func (c *Controller) ensureExecutionNamespace(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionNamespace(cluster.Name), Labels: map[string]string{names.SystemLabel: "true"}}}
	_, err := c.host.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: ControllerName})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		c.event(cluster, corev1.EventTypeWarning, EventReasonCreateExecutionSpaceFailed,
			fmt.Sprintf("Failed to create execution space for cluster(%s): %v", cluster.Name, err))
		return fmt.Errorf("creating execution namespace %s: %w", ns.Name, err)
	}
	c.event(cluster, corev1.EventTypeNormal, EventReasonCreateExecutionSpaceSucceed,
		fmt.Sprintf("Created execution space(%s) for cluster(%s).", ns.Name, cluster.Name))
	return nil
}

func (c *Controller) event(cluster *clusterv1alpha1.Cluster, eventType, reason, msg string) {
	if c.recorder != nil {
		c.recorder.Event(cluster, eventType, reason, msg)
	}
}

// remove deletes the execution namespace (and with it the cluster's Works),
// then releases the Cluster once the namespace is gone.
func (c *Controller) remove(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	if !slices.Contains(cluster.Finalizers, Finalizer) {
		return nil
	}
	ns := names.ExecutionNamespace(cluster.Name)
	err := c.host.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		c.event(cluster, corev1.EventTypeWarning, EventReasonRemoveExecutionSpaceFailed,
			fmt.Sprintf("Failed to remove execution space for cluster(%s): %v", cluster.Name, err))
		return fmt.Errorf("deleting execution namespace %s: %w", ns, err)
	}
	if err == nil {
		if _, err := c.host.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
			c.queue.AddAfter(cluster.Name, 2*time.Second)
			return nil
		}
		c.event(cluster, corev1.EventTypeNormal, EventReasonRemoveExecutionSpaceSucceed,
			fmt.Sprintf("Removed execution space(%s) for cluster(%s).", ns, cluster.Name))
	}
	if c.memberCleanup != nil && cluster.Spec.SyncMode == clusterv1alpha1.Push {
		if err := c.memberCleanup(ctx, cluster); err != nil {
			// An unreachable member must not block the deletion forever.
			klog.FromContext(ctx).Error(err, "Cleaning up the member failed; releasing the cluster anyway", "cluster", cluster.Name)
		}
	}
	finalizers := slices.DeleteFunc(slices.Clone(cluster.Finalizers), func(f string) bool { return f == Finalizer })
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": finalizers, "resourceVersion": cluster.ResourceVersion}})
	_, err = c.client.ClusterV1alpha1().Clusters().Patch(ctx, cluster.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// syncTaints keeps the not-ready / unreachable NoSchedule taints in step
// with the Ready condition: False → not-ready, Unknown or missing for long →
// unreachable, True → neither.
func (c *Controller) syncTaints(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	want := map[string]bool{clusterv1alpha1.TaintClusterNotReady: false, clusterv1alpha1.TaintClusterUnreachable: false}
	cond := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	switch {
	case cond == nil:
		// Not observed yet: nothing to say.
	case cond.Status == metav1.ConditionFalse:
		want[clusterv1alpha1.TaintClusterNotReady] = true
	case cond.Status == metav1.ConditionUnknown:
		want[clusterv1alpha1.TaintClusterUnreachable] = true
	}
	taints := slices.Clone(cluster.Spec.Taints)
	for key, present := range want {
		idx := slices.IndexFunc(taints, func(t corev1.Taint) bool { return t.Key == key && t.Effect == corev1.TaintEffectNoSchedule })
		switch {
		case present && idx < 0:
			added := metav1.NewTime(c.now())
			taints = append(taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &added})
		case !present && idx >= 0:
			taints = slices.Delete(taints, idx, idx+1)
		}
	}
	if apiequality.Semantic.DeepEqual(taints, cluster.Spec.Taints) || (len(taints) == 0 && len(cluster.Spec.Taints) == 0) {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": cluster.ResourceVersion}, "spec": map[string]any{"taints": taints}})
	_, err := c.client.ClusterV1alpha1().Clusters().Patch(ctx, cluster.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	return err
}
