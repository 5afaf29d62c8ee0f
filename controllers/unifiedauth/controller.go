// Package unifiedauth grants each member's impersonator service account
// exactly the identities that host RBAC lets reach that cluster through
// clusters/proxy (or search's proxying/proxy), so the member sees — and its
// own RBAC judges — the real caller.
package unifiedauth

import (
	"context"
	"hash/fnv"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbacinformers "k8s.io/client-go/informers/rbac/v1"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "unified-auth"

// ImpersonatorName names the member ClusterRole, its binding and the
// impersonator service account.
const ImpersonatorName = "karmada-impersonator"

// Controller keeps the member impersonation RBAC in step with host RBAC. The
// ClusterRole and ClusterRoleBinding are shipped as Works into the cluster's
// execution namespace, owned by the Cluster, as Karmada does: the execution
// controller applies them to push members, flotilla-agent to pull members.
type Controller struct {
	clusters clusterlisters.ClusterLister
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	// The sub-reconcilers (reconcile.go): the member RBAC host RBAC
	// calls for, and the Works that carry it.
	rbac  rbacReconciler
	works workReconciler
	// created are the Works created and not yet in the informer: a pass
	// over the same cluster before they arrive reads them as stored
	// instead of creating them again.
	created *works.Created
}

// createdTTL is how long a created Work is read as stored while the
// informer does not have it.
const createdTTL = time.Minute

// setReconcilers builds the sub-reconcilers over the host RBAC and Work
// listers; client writes the Works.
func (c *Controller) setReconcilers(roles rbaclisters.ClusterRoleLister, bindings rbaclisters.ClusterRoleBindingLister,
	workLister worklisters.WorkLister, client versioned.Interface) {
	c.rbac = rbacReconciler{
		listBindings: func() ([]*rbacv1.ClusterRoleBinding, error) { return bindings.List(labels.Everything()) },
		getRole:      roles.Get,
	}
	// The Works of one cluster are those of its execution namespace.
	c.created = works.NewCreated(createdTTL, func(w *workv1alpha1.Work) string { return w.Namespace })
	c.works = workReconciler{
		getWork: func(namespace, name string) (*workv1alpha1.Work, error) {
			w, err := workLister.Works(namespace).Get(name)
			if apierrors.IsNotFound(err) {
				if created, ok := c.created.Get(namespace, name); ok {
					return created, nil
				}
			}
			return w, err
		},
		write: func(ctx context.Context, cur, desired *workv1alpha1.Work) error {
			return c.created.Write(ctx, client, cur, desired, ControllerName)
		},
	}
}

// Event reasons on Clusters, Karmada's (docs/compatibility.md, Events).
const (
	EventReasonSyncImpersonationConfigSucceed = "SyncImpersonationConfigSucceed"
	EventReasonSyncImpersonationConfigFailed  = "SyncImpersonationConfigFailed"
)

// New returns the controller.
func New(clusters clusterinformers.ClusterInformer, roles rbacinformers.ClusterRoleInformer, bindings rbacinformers.ClusterRoleBindingInformer,
	works workinformers.WorkInformer, client versioned.Interface, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		recorder: recorder,
		clusters: clusters.Lister(),
		synced: []cache.InformerSynced{clusters.Informer().HasSynced, roles.Informer().HasSynced, bindings.Informer().HasSynced,
			works.Informer().HasSynced},
		queue: worker.NewQueue(ControllerName),
	}
	c.setReconcilers(roles.Lister(), bindings.Lister(), works.Lister(), client)
	onCluster := worker.EnqueueKey(c.queue)
	// Any RBAC change may change who may proxy to any cluster.
	all := func(any) { c.enqueueAll() }
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onCluster, UpdateFunc: func(_, o any) { onCluster(o) }}); err != nil {
		return nil, err
	}
	for _, inf := range []cache.SharedIndexInformer{roles.Informer(), bindings.Informer()} {
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all, UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all}); err != nil {
			return nil, err
		}
	}
	// A Work changed or removed by someone else is put back.
	onWork := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if w, ok := obj.(*workv1alpha1.Work); ok && w.Annotations[fingerprintAnnotation] != "" {
			if cluster, ok := names.ClusterOf(w.Namespace); ok {
				c.queue.Add(cluster)
			}
		}
	}
	// Status writes of the execution controller change neither.
	changed := func(old, cur any) {
		o, ok1 := old.(*workv1alpha1.Work)
		n, ok2 := cur.(*workv1alpha1.Work)
		if ok1 && ok2 && (o.Generation != n.Generation || o.Annotations[fingerprintAnnotation] != n.Annotations[fingerprintAnnotation]) {
			onWork(cur)
		}
	}
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: changed, DeleteFunc: onWork}); err != nil {
		return nil, err
	}
	if _, err := works.Informer().AddEventHandler(c.created.Handler()); err != nil {
		return nil, err
	}
	return c, nil
}

// fingerprintAnnotation on each Work holds a hash of the rules and subject
// it carries: it marks the Works this controller writes, and changes with
// what they carry.
const fingerprintAnnotation = "unifiedauth.flotilla.io/applied"

func fnv64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func (c *Controller) enqueueAll() {
	list, err := c.clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cl := range list {
		c.queue.Add(cl.Name)
	}
}

// Run reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// Cleanup deletes the impersonation RBAC from a member being removed.
func Cleanup(members *member.Cache) func(context.Context, *clusterv1alpha1.Cluster) error {
	return func(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
		if cluster.Spec.ImpersonatorSecretRef == nil {
			return nil
		}
		client, err := members.Get(cluster)
		if err != nil {
			return err
		}
		rbac := client.Clientset.RbacV1()
		if err := rbac.ClusterRoleBindings().Delete(ctx, ImpersonatorName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err := rbac.ClusterRoles().Delete(ctx, ImpersonatorName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	}
}
