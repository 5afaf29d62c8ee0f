package mcs

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/mcs/plan"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
)

// ImportController gives the members importing a service its derived
// Service and endpoints. Its keys are "<namespace>/<service>".
type ImportController struct {
	works    cache.Indexer
	queue    workqueue.TypedRateLimitingInterface[string]
	synced   []cache.InformerSynced
	dispatch dispatchReconciler
}

// NewImport returns the serviceImport controller. It registers the
// members' ServiceImports with hub: call it before the hub runs. Events
// go to recorder.
func NewImport(hub Hub, works workinformers.WorkInformer, clusters clusterinformers.ClusterInformer, client versioned.Interface,
	members *member.Cache, recorder record.EventRecorder) (*ImportController, error) {
	if err := addWorkIndex(works.Informer()); err != nil {
		return nil, err
	}
	c := &ImportController{works: works.Informer().GetIndexer(), queue: worker.NewQueue(ServiceImportControllerName),
		synced: []cache.InformerSynced{works.Informer().HasSynced, clusters.Informer().HasSynced}}
	c.dispatch = dispatchReconciler{
		clusters: func() ([]*clusterv1alpha1.Cluster, error) { return clusters.Lister().List(labels.Everything()) },
		serviceImport: func(cluster, namespace, name string) (*unstructured.Unstructured, informerState) {
			inf, ok := hub.Informer(cluster, multiclusterv1alpha1.ServiceImports)
			switch {
			case !ok:
				return nil, notRunning
			case !inf.HasSynced():
				return nil, listing
			}
			obj, exists, err := inf.GetStore().GetByKey(namespace + "/" + name)
			if err != nil {
				return nil, listing
			}
			if u, ok := obj.(*unstructured.Unstructured); exists && ok {
				return u, listed
			}
			return nil, listed
		},
		works: serviceWorks(c.works),
		work:  workByName(c.works),
		write: newWorksWriter(client),
		event: func(ref *corev1.ObjectReference, eventType, reason, message string) {
			recorder.Event(ref, eventType, reason, message)
		},
		importStatus: func(ctx context.Context, cluster string, si *unstructured.Unstructured, names []string) error {
			cl, err := clusters.Lister().Get(cluster)
			if err != nil {
				return err
			}
			mc, err := members.Get(cl)
			if err != nil {
				return err
			}
			list := make([]map[string]string, 0, len(names))
			for _, n := range names {
				list = append(list, map[string]string{"cluster": n})
			}
			p, err := json.Marshal(map[string]any{"status": map[string]any{"clusters": list}})
			if err != nil {
				return err
			}
			_, err = mc.Dynamic.Resource(multiclusterv1alpha1.ServiceImports).Namespace(si.GetNamespace()).Patch(ctx, si.GetName(),
				types.MergePatchType, p, metav1.PatchOptions{FieldManager: FieldManager}, "status")
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
		now: time.Now,
	}
	if err := hub.AddResource(member.Resource{GVR: multiclusterv1alpha1.ServiceImports}, func(string) cache.ResourceEventHandler {
		return memberHandler(func(u *unstructured.Unstructured) { c.queue.Add(u.GetNamespace() + "/" + u.GetName()) })
	}); err != nil {
		return nil, err
	}
	onWork := func(obj any) {
		if w, ok := work(obj); ok {
			if key := serviceKeyOf(w); key != "" {
				c.queue.Add(key)
			}
		}
	}
	if _, err := works.Informer().AddEventHandler(workHandler(onWork)); err != nil {
		return nil, err
	}
	if _, err := clusters.Informer().AddEventHandler(clusterHandler(multiclusterv1alpha1.ServiceImports, c.enqueueCluster)); err != nil {
		return nil, err
	}
	return c, nil
}

// Run reconciles until ctx ends.
func (c *ImportController) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *ImportController) reconcile(ctx context.Context, key string) error {
	namespace, name, ok := strings.Cut(key, "/")
	if !ok {
		return nil
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("service", key))
	retry, err := c.dispatch.reconcile(ctx, namespace, name)
	if err == nil && retry > 0 {
		c.queue.AddAfter(key, retry)
	}
	return err
}

// enqueueCluster queues the services imported into a cluster whose
// readiness changed.
func (c *ImportController) enqueueCluster(cluster string) {
	objs, _ := c.works.ByIndex(cache.NamespaceIndex, names.ExecutionNamespace(cluster))
	for _, o := range objs {
		if w, ok := o.(*workv1alpha1.Work); ok && plan.ManagedBy(w, networkingv1alpha1.ManagedByServiceImport) {
			if key := serviceKeyOf(w); key != "" {
				c.queue.Add(key)
			}
		}
	}
}
