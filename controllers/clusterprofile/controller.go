// Package clusterprofile publishes, for every Cluster, its ClusterProfile
// of the SIG-Multicluster Cluster Inventory API on the host, in the
// inventory namespace: created when the cluster joins, its status kept in
// step with the cluster's (inventory.Profile), deleted when the cluster
// goes. Only profiles labelled with Flotilla as their manager are
// touched.
package clusterprofile

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"

	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/hostnamespace"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/inventory"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "cluster-profile"

// Controller keeps the ClusterProfiles of the Clusters.
type Controller struct {
	clusters  clusterlisters.ClusterLister
	profiles  cache.GenericNamespaceLister
	synced    []cache.InformerSynced
	factory   dynamicinformer.DynamicSharedInformerFactory
	client    dynamic.ResourceInterface
	host      kubernetes.Interface
	namespace string
	access    inventory.Access
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller publishing profiles in namespace, their
// access provider access.
func New(clusters clusterinformers.ClusterInformer, hostDynamic dynamic.Interface, host kubernetes.Interface, namespace string, access inventory.Access) (*Controller, error) {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(hostDynamic, 0, namespace, func(o *metav1.ListOptions) {
		o.LabelSelector = labels.SelectorFromSet(labels.Set{multiclusterv1alpha1.LabelClusterManager: inventory.Manager}).String()
	})
	profiles := factory.ForResource(multiclusterv1alpha1.ClusterProfiles)
	c := &Controller{
		clusters:  clusters.Lister(),
		profiles:  profiles.Lister().ByNamespace(namespace),
		synced:    []cache.InformerSynced{clusters.Informer().HasSynced, profiles.Informer().HasSynced},
		factory:   factory,
		client:    hostDynamic.Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(namespace),
		host:      host,
		namespace: namespace,
		access:    access,
		queue:     worker.NewQueue(ControllerName),
	}
	enqueue := worker.EnqueueKey(c.queue)
	handler := cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, cur any) { enqueue(cur) }, DeleteFunc: enqueue}
	if _, err := clusters.Informer().AddEventHandler(handler); err != nil {
		return nil, err
	}
	// A profile's key is namespace/name; the queue's is the cluster name.
	byName := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			c.queue.Add(u.GetName())
		}
	}
	_, err := profiles.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: byName, UpdateFunc: func(_, cur any) { byName(cur) }, DeleteFunc: byName})
	return c, err
}

// Run publishes profiles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.factory.Start(ctx.Done())
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// reconcile makes the profile of cluster name what the cluster says, with
// one write when it differs (two when it is created: the object, then its
// status).
func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	cur, err := c.profile(name)
	if err != nil {
		return err
	}
	if cluster == nil || cluster.DeletionTimestamp != nil {
		if cur == nil {
			return nil
		}
		err := c.client.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(cur.GetUID())}})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	want := inventory.Profile(cluster, c.namespace, c.access)
	if cur == nil {
		if cur, err = c.create(ctx, want); err != nil || cur == nil {
			return err
		}
	}
	if apiequality.Semantic.DeepEqual(cur.Object["status"], want.Object["status"]) {
		return nil
	}
	patch, err := (&unstructured.Unstructured{Object: map[string]any{"status": want.Object["status"]}}).MarshalJSON()
	if err != nil {
		return err
	}
	_, err = c.client.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName}, "status")
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its delete event brings it back
	}
	return err
}

// profile is the cached profile of cluster name, nil when there is none.
func (c *Controller) profile(name string) (*unstructured.Unstructured, error) {
	obj, err := c.profiles.Get(name)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("the profile cache holds %T", obj)
	}
	return u, nil
}

// create creates want (without status, which its subresource takes),
// creating the inventory namespace first when it is missing (labelled to
// stay on the control plane: Karmada's namespace sync would otherwise
// propagate it to every member). A profile of
// that name someone else created is left alone (nil, nil).
func (c *Controller) create(ctx context.Context, want *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj := want.DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "status")
	created, err := c.client.Create(ctx, obj, metav1.CreateOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		if err := hostnamespace.Ensure(ctx, c.host, c.namespace, ControllerName); err != nil {
			return nil, err
		}
		created, err = c.client.Create(ctx, obj, metav1.CreateOptions{FieldManager: ControllerName})
	}
	if apierrors.IsAlreadyExists(err) {
		// Not in the cache of ours: another manager's profile of that name.
		return nil, nil
	}
	return created, err
}
