package remedy

import (
	"context"
	"encoding/json"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	remedyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/remedy/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	remedylisters "github.com/flotilla-io/flotilla/apis/generated/listers/remedy/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
)

// ControllerName is the name of the controller in --controllers, Karmada's.
const ControllerName = "remedy"

// Controller keeps clusters' status.remedyActions as the Remedies say. Its
// queue holds cluster names.
type Controller struct {
	clusters clusterlisters.ClusterLister
	remedies remedylisters.RemedyLister
	synced   []cache.InformerSynced
	// patch merge-patches a cluster's status subresource.
	patch func(ctx context.Context, name string, body []byte) error
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller. A cluster is reconsidered when it appears,
// when its conditions change, and when its remedyActions change under
// another writer; the clusters a Remedy selects when it appears, changes
// or goes (on a change, those it selected before too).
func New(clusters clusterinformers.ClusterInformer, remedies remedyinformers.RemedyInformer, client versioned.Interface) (*Controller, error) {
	c := &Controller{
		clusters: clusters.Lister(), remedies: remedies.Lister(),
		synced: []cache.InformerSynced{clusters.Informer().HasSynced, remedies.Informer().HasSynced},
		patch: func(ctx context.Context, name string, body []byte) error {
			_, err := client.ClusterV1alpha1().Clusters().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: ControllerName}, "status")
			return err
		},
		queue: worker.NewQueue(ControllerName),
	}
	enqueue := worker.EnqueueKey(c.queue)
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			if clusterChanged(old.(*clusterv1alpha1.Cluster), cur.(*clusterv1alpha1.Cluster)) {
				enqueue(cur)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := remedies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.enqueueSelected(obj) },
		UpdateFunc: func(old, cur any) {
			o, n := old.(*remedyv1alpha1.Remedy), cur.(*remedyv1alpha1.Remedy)
			if !apiequality.Semantic.DeepEqual(o.Spec, n.Spec) {
				c.enqueueSelected(o, n)
			}
		},
		DeleteFunc: func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			c.enqueueSelected(obj)
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// clusterChanged reports whether a cluster's update can change its
// actions: its conditions changed, or its actions did (another writer's
// stale copy is put right).
func clusterChanged(old, cur *clusterv1alpha1.Cluster) bool {
	return !apiequality.Semantic.DeepEqual(old.Status.Conditions, cur.Status.Conditions) ||
		!slices.Equal(old.Status.RemedyActions, cur.Status.RemedyActions)
}

// enqueueSelected queues every cluster one of the Remedies selects.
func (c *Controller) enqueueSelected(objs ...any) {
	var remedies []*remedyv1alpha1.Remedy
	for _, obj := range objs {
		if r, ok := obj.(*remedyv1alpha1.Remedy); ok {
			remedies = append(remedies, r)
		}
	}
	for _, name := range c.selected(remedies) {
		c.queue.Add(name)
	}
}

// selected returns the names of the clusters any of remedies selects:
// the names listed, or every known cluster when one has no affinity.
func (c *Controller) selected(remedies []*remedyv1alpha1.Remedy) []string {
	var names []string
	for _, r := range remedies {
		if r.Spec.ClusterAffinity == nil {
			clusters, err := c.clusters.List(labels.Everything())
			if err != nil {
				return nil // a lister over an indexer does not fail
			}
			names = names[:0]
			for _, cl := range clusters {
				names = append(names, cl.Name)
			}
			break
		}
		names = append(names, r.Spec.ClusterAffinity.ClusterNames...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// reconcile writes a cluster's remedyActions when they differ from what
// the Remedies say: set with one merge patch of the status, removed when
// none are left, guarded by the resourceVersion the decision was made on.
func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if cluster.DeletionTimestamp != nil {
		return nil
	}
	remedies, err := c.remedies.List(labels.Everything())
	if err != nil {
		return err
	}
	actions := Actions(cluster, remedies)
	if slices.Equal(actions, cluster.Status.RemedyActions) {
		return nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": cluster.ResourceVersion},
		// nil removes the field, as Karmada's update with an empty list does.
		"status": map[string]any{"remedyActions": actions},
	})
	if err != nil {
		return err
	}
	return c.patch(ctx, name, body) // a conflict retries from the newer cluster
}
