package mcs

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	networkinginformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/networking/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/trim"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ExportController collects the EndpointSlices of exported Services.
// Its keys are "<cluster>/<namespace>/<service>".
type ExportController struct {
	hub      Hub
	clusters clusterlisters.ClusterLister
	works    cache.Indexer
	// hostSlices caches the host's copies of the collected slices, and
	// only them (plan.HostSliceSelector); Run runs it.
	hostSlices cache.SharedIndexInformer
	queue      workqueue.TypedRateLimitingInterface[string]
	synced     []cache.InformerSynced
	collect    collectReconciler
}

// NewExport returns the serviceExport controller. It registers the
// members' ServiceExports and EndpointSlices with hub: call it before the
// hub runs. host reaches the host API server, where the copies of the
// slices exported with a ServiceExport are kept.
func NewExport(hub Hub, works workinformers.WorkInformer, clusters clusterinformers.ClusterInformer,
	services networkinginformers.MultiClusterServiceInformer, client versioned.Interface, host kubernetes.Interface, members *member.Cache,
	recorder record.EventRecorder) (*ExportController, error) {
	if err := addWorkIndex(works.Informer()); err != nil {
		return nil, err
	}
	hostSlices := discoveryinformers.NewFilteredEndpointSliceInformer(host, metav1.NamespaceAll, 0,
		cache.Indexers{hostSlicesByService: hostSliceKey}, func(o *metav1.ListOptions) { o.LabelSelector = plan.HostSliceSelector })
	if err := hostSlices.SetTransform(trim.ManagedFields); err != nil {
		return nil, err
	}
	c := &ExportController{hub: hub, clusters: clusters.Lister(), works: works.Informer().GetIndexer(), hostSlices: hostSlices,
		queue: worker.NewQueue(ServiceExportControllerName),
		synced: []cache.InformerSynced{works.Informer().HasSynced, clusters.Informer().HasSynced, services.Informer().HasSynced,
			hostSlices.HasSynced}}
	mcsLister := services.Lister()
	c.collect = collectReconciler{
		cluster: func(name string) (*clusterv1alpha1.Cluster, error) {
			cl, err := c.clusters.Get(name)
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return cl, err
		},
		exported: func(cluster, namespace, name string) (bool, bool) {
			inf, ok := hub.Informer(cluster, multiclusterv1alpha1.ServiceExports)
			if !ok || !inf.HasSynced() {
				return false, false
			}
			obj, exists, err := inf.GetStore().GetByKey(namespace + "/" + name)
			if err != nil {
				return false, false
			}
			u, ok := obj.(*unstructured.Unstructured)
			return exists && ok && u.GetDeletionTimestamp() == nil, true
		},
		provided: func(cluster, namespace, name string) bool {
			m, err := mcsLister.MultiClusterServices(namespace).Get(name)
			return err == nil && m.DeletionTimestamp == nil && plan.CrossCluster(m) && plan.Providers(m).Has(cluster)
		},
		slices: func(cluster, namespace string) ([]*unstructured.Unstructured, bool) {
			inf, ok := hub.Watch(cluster, endpointSlices)
			if !ok || !inf.HasSynced() {
				return nil, false
			}
			objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
			if err != nil {
				return nil, false
			}
			out := make([]*unstructured.Unstructured, 0, len(objs))
			for _, o := range objs {
				if u, ok := o.(*unstructured.Unstructured); ok {
					out = append(out, u)
				}
			}
			return out, true
		},
		works: serviceWorks(c.works),
		work:  workByName(c.works),
		write: newWorksWriter(client),
		host:  newHostSliceReconciler(hostSlices.GetIndexer(), host),
		serviceExport: func(cluster, namespace, name string) *unstructured.Unstructured {
			return memberGet(hub.Informer(cluster, multiclusterv1alpha1.ServiceExports))(namespace, name)
		},
		service: func(cluster, namespace, name string) (*unstructured.Unstructured, bool) {
			inf, ok := hub.Watch(cluster, memberServices)
			if !ok || !inf.HasSynced() {
				return nil, false
			}
			return memberGet(inf, true)(namespace, name), true
		},
		exporters: c.exporters,
		exportStatus: func(ctx context.Context, cluster string, se *unstructured.Unstructured, conditions []metav1.Condition) error {
			cl, err := c.clusters.Get(cluster)
			if err != nil {
				return err
			}
			mc, err := members.Get(cl)
			if err != nil {
				return err
			}
			p, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conditions}})
			if err != nil {
				return err
			}
			_, err = mc.Dynamic.Resource(multiclusterv1alpha1.ServiceExports).Namespace(se.GetNamespace()).Patch(ctx, se.GetName(),
				types.MergePatchType, p, metav1.PatchOptions{FieldManager: FieldManager}, "status")
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		event: func(ref *corev1.ObjectReference, eventType, reason, message string) {
			recorder.Event(ref, eventType, reason, message)
		},
	}
	if err := hub.AddResource(member.Resource{GVR: multiclusterv1alpha1.ServiceExports}, c.onServiceExport); err != nil {
		return nil, err
	}
	if err := hub.AddResource(member.Resource{GVR: memberServices, OnDemand: true}, c.onService); err != nil {
		return nil, err
	}
	if err := hub.AddResource(member.Resource{GVR: endpointSlices, OnDemand: true}, c.onEndpointSlice); err != nil {
		return nil, err
	}
	onWork := func(obj any) {
		if w, ok := work(obj); ok && plan.IsCollected(w, "") {
			if cluster, ok := names.ClusterOf(w.Namespace); ok {
				if key := serviceKeyOf(w); key != "" {
					c.queue.Add(cluster + "/" + key)
				}
			}
		}
	}
	if _, err := works.Informer().AddEventHandler(workHandler(onWork)); err != nil {
		return nil, err
	}
	// A copy changed or deleted by someone else is made again; those
	// left from an export gone while the controller was not running are
	// deleted once listed.
	if _, err := hostSlices.AddEventHandler(changeHandler(func(o, n *discoveryv1.EndpointSlice) bool {
		return o.ResourceVersion != n.ResourceVersion
	}, func(s *discoveryv1.EndpointSlice) {
		if keys, _ := hostSliceKey(s); len(keys) == 1 {
			c.queue.Add(keys[0])
		}
	})); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(clusterHandler(multiclusterv1alpha1.ServiceExports, c.enqueueCluster)); err != nil {
		return nil, err
	}
	if _, err := services.Informer().AddEventHandler(mcsHandler(func(m *networkingv1alpha1.MultiClusterService) {
		// Its providers may have changed: every cluster is looked at.
		cls, _ := c.clusters.List(labels.Everything())
		for _, cl := range cls {
			c.queue.Add(cl.Name + "/" + m.Namespace + "/" + m.Name)
		}
	})); err != nil {
		return nil, err
	}
	return c, nil
}

// Run reconciles until ctx ends.
func (c *ExportController) Run(ctx context.Context, workers int) {
	go c.hostSlices.RunWithContext(ctx)
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *ExportController) reconcile(ctx context.Context, key string) error {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return nil
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("cluster", parts[0], "service", parts[1]+"/"+parts[2]))
	retry, err := c.collect.reconcile(ctx, parts[0], parts[1], parts[2])
	if err == nil && retry > 0 {
		c.queue.AddAfter(key, retry)
	}
	return err
}

// onServiceExport queues the service of a member's ServiceExport in every
// member exporting it: their conflicts are decided together.
func (c *ExportController) onServiceExport(cluster string) cache.ResourceEventHandler {
	return memberHandler(func(u *unstructured.Unstructured) {
		c.queue.Add(cluster + "/" + u.GetNamespace() + "/" + u.GetName())
		for _, o := range c.exporters(u.GetNamespace(), u.GetName()) {
			c.queue.Add(o + "/" + u.GetNamespace() + "/" + u.GetName())
		}
	})
}

// onService queues a member's Service in every member exporting it.
func (c *ExportController) onService(string) cache.ResourceEventHandler {
	return memberHandler(func(u *unstructured.Unstructured) {
		for _, o := range c.exporters(u.GetNamespace(), u.GetName()) {
			c.queue.Add(o + "/" + u.GetNamespace() + "/" + u.GetName())
		}
	})
}

// exporters returns the members with a ServiceExport namespace/name.
func (c *ExportController) exporters(namespace, name string) []string {
	cls, _ := c.clusters.List(labels.Everything())
	var out []string
	for _, cl := range cls {
		if se := memberGet(c.hub.Informer(cl.Name, multiclusterv1alpha1.ServiceExports))(namespace, name); se != nil && se.GetDeletionTimestamp() == nil {
			out = append(out, cl.Name)
		}
	}
	return out
}

// memberGet reads namespace/name from a member informer (nil when it has
// not listed, or has no such object).
func memberGet(inf cache.SharedIndexInformer, ok bool) func(namespace, name string) *unstructured.Unstructured {
	return func(namespace, name string) *unstructured.Unstructured {
		if !ok || !inf.HasSynced() {
			return nil
		}
		obj, exists, err := inf.GetStore().GetByKey(namespace + "/" + name)
		if err != nil || !exists {
			return nil
		}
		u, _ := obj.(*unstructured.Unstructured)
		return u
	}
}

// onEndpointSlice queues the service of a member's EndpointSlice when the
// member exports it or provides it to a MultiClusterService, or did
// (collected Works remain).
func (c *ExportController) onEndpointSlice(cluster string) cache.ResourceEventHandler {
	return memberHandler(func(u *unstructured.Unstructured) {
		svc := u.GetLabels()[discoveryv1.LabelServiceName]
		if !plan.Collectable(u.GetLabels(), svc) {
			return
		}
		if exists, _ := c.collect.exported(cluster, u.GetNamespace(), svc); !exists && !c.collect.provided(cluster, u.GetNamespace(), svc) &&
			!c.collected(cluster, u.GetNamespace(), svc) {
			return
		}
		c.queue.Add(cluster + "/" + u.GetNamespace() + "/" + svc)
	})
}

// collected tells whether Works collected from cluster hold slices of
// service namespace/name.
func (c *ExportController) collected(cluster, namespace, name string) bool {
	ws, _ := c.collect.works(namespace, name)
	for _, w := range ws {
		if w.Namespace == names.ExecutionNamespace(cluster) {
			return true
		}
	}
	return false
}

// enqueueCluster queues every service collected from, or exported by, a
// cluster whose readiness changed, or with copies on the host.
func (c *ExportController) enqueueCluster(cluster string) {
	objs, _ := c.works.ByIndex(cache.NamespaceIndex, names.ExecutionNamespace(cluster))
	for _, o := range objs {
		if w, ok := o.(*workv1alpha1.Work); ok && plan.IsCollected(w, "") {
			if key := serviceKeyOf(w); key != "" {
				c.queue.Add(cluster + "/" + key)
			}
		}
	}
	if inf, ok := c.hub.Informer(cluster, multiclusterv1alpha1.ServiceExports); ok {
		for _, key := range inf.GetStore().ListKeys() {
			c.queue.Add(cluster + "/" + key)
		}
	}
	for _, key := range c.hostSlices.GetIndexer().ListIndexFuncValues(hostSlicesByService) {
		if strings.HasPrefix(key, cluster+"/") {
			c.queue.Add(key)
		}
	}
}

// memberHandler calls f with the object of every event of a member
// informer whose object changed.
func memberHandler(f func(*unstructured.Unstructured)) cache.ResourceEventHandler {
	return changeHandler(func(o, n *unstructured.Unstructured) bool { return o.GetResourceVersion() != n.GetResourceVersion() }, f)
}

// changeHandler calls f with the object of type T of every add and delete
// event, and of every update that changed says matters.
func changeHandler[T any](changed func(old, cur T) bool, f func(T)) cache.ResourceEventHandler {
	call := func(obj any) {
		if o, ok := eventObject[T](obj); ok {
			f(o)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: call,
		UpdateFunc: func(old, cur any) {
			o, ok1 := eventObject[T](old)
			n, ok2 := eventObject[T](cur)
			if ok1 && ok2 && !changed(o, n) {
				return
			}
			call(cur)
		},
		DeleteFunc: call,
	}
}

// eventObject reads the object of type T of an event (a deleted one's
// last known state included).
func eventObject[T any](obj any) (T, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(T)
	return o, ok
}

// work reads a Work from an event.
func work(obj any) (*workv1alpha1.Work, bool) { return eventObject[*workv1alpha1.Work](obj) }

// workHandler calls f for the Works whose spec, labels or deletion
// changed: the execution controller's status writes are not worth a look.
func workHandler(f func(any)) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: f,
		UpdateFunc: func(old, cur any) {
			o, ok1 := work(old)
			n, ok2 := work(cur)
			if ok1 && ok2 && o.Generation == n.Generation && labels.Equals(o.Labels, n.Labels) &&
				(o.DeletionTimestamp == nil) == (n.DeletionTimestamp == nil) {
				return
			}
			f(old)
			f(cur)
		},
		DeleteFunc: f,
	}
}

// clusterHandler calls f with the name of a Cluster that became or
// stopped being Ready, started or stopped serving gvr, or went.
func clusterHandler(gvr schema.GroupVersionResource, f func(cluster string)) cache.ResourceEventHandler {
	cluster := eventObject[*clusterv1alpha1.Cluster]
	return cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, ok1 := cluster(old)
			n, ok2 := cluster(cur)
			if ok1 && ok2 && (clusterReady(o) != clusterReady(n) || member.Serves(o, gvr) != member.Serves(n, gvr)) {
				f(n.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if c, ok := cluster(obj); ok {
				f(c.Name)
			}
		},
	}
}

// mcsHandler calls f with every MultiClusterService added, deleted, or
// whose labels, spec, finalizers or deletion changed (not its status).
func mcsHandler(f func(*networkingv1alpha1.MultiClusterService)) cache.ResourceEventHandler {
	return changeHandler(func(o, n *networkingv1alpha1.MultiClusterService) bool {
		return o.Generation != n.Generation || !labels.Equals(o.Labels, n.Labels) ||
			(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) || !slices.Equal(o.Finalizers, n.Finalizers)
	}, f)
}
