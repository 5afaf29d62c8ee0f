package clustertaintpolicy

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	policyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/policy/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/selectors"
)

// ControllerName is the name of the controller in --controllers.
const ControllerName = "clusterTaintPolicy"

// Event reasons, Karmada's, recorded on the cluster (docs/compatibility.md,
// Events).
const (
	ReasonTaintClusterSucceed = "TaintClusterSucceed"
	ReasonTaintClusterFailed  = "TaintClusterFailed"
)

// Controller keeps clusters' taints as the ClusterTaintPolicies say.
type Controller struct {
	clusters clusterlisters.ClusterLister
	policies policylisters.ClusterTaintPolicyLister
	synced   []cache.InformerSynced
	// patch writes a cluster's taints, guarded by its resourceVersion.
	patch    func(ctx context.Context, name string, body []byte) error
	recorder record.EventRecorder
	queue    workqueue.TypedRateLimitingInterface[string]
	now      func() time.Time
}

// New returns the controller; a cluster is reconsidered when its
// conditions change, and every cluster a policy targets when the policy
// appears or its spec changes.
func New(clusters clusterinformers.ClusterInformer, policies policyinformers.ClusterTaintPolicyInformer, client versioned.Interface, recorder record.EventRecorder) (*Controller, error) {
	c := &Controller{
		clusters: clusters.Lister(), policies: policies.Lister(),
		synced: []cache.InformerSynced{clusters.Informer().HasSynced, policies.Informer().HasSynced},
		patch: func(ctx context.Context, name string, body []byte) error {
			_, err := client.ClusterV1alpha1().Clusters().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: ControllerName})
			return err
		},
		recorder: recorder, queue: worker.NewQueue(ControllerName), now: time.Now,
	}
	enqueue := worker.EnqueueKey(c.queue)
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			o, n := old.(*clusterv1alpha1.Cluster), cur.(*clusterv1alpha1.Cluster)
			// Conditions decide; labels and fields decide the targets.
			if !apiequality.Semantic.DeepEqual(o.Status.Conditions, n.Status.Conditions) || selectors.ClusterTargetingChanged(o, n) {
				enqueue(cur)
			}
		},
	}); err != nil {
		return nil, err
	}
	if _, err := policies.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueTargets,
		UpdateFunc: func(old, cur any) {
			if !apiequality.Semantic.DeepEqual(old.(*policyv1alpha1.ClusterTaintPolicy).Spec, cur.(*policyv1alpha1.ClusterTaintPolicy).Spec) {
				c.enqueueTargets(cur)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueTargets queues every cluster a policy selects.
func (c *Controller) enqueueTargets(obj any) {
	p, ok := obj.(*policyv1alpha1.ClusterTaintPolicy)
	if !ok {
		return
	}
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return
	}
	for _, cl := range clusters {
		if selectors.ClusterMatches(cl, p.Spec.TargetClusters) {
			c.queue.Add(cl.Name)
		}
	}
}

// Run runs the controller until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

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
	policies, err := c.policies.List(labels.Everything())
	if err != nil {
		return err
	}
	taints := Taints(cluster, policies, metav1.NewTime(c.now()))
	if apiequality.Semantic.DeepEqual(taints, cluster.Spec.Taints) || (len(taints) == 0 && len(cluster.Spec.Taints) == 0) {
		return nil
	}
	body, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": cluster.ResourceVersion},
		"spec":     map[string]any{"taints": taints},
	})
	if err != nil {
		return err
	}
	if err := c.patch(ctx, name, body); err != nil {
		if !apierrors.IsConflict(err) {
			c.recorder.Event(cluster, corev1.EventTypeWarning, ReasonTaintClusterFailed, err.Error())
		}
		return err // a conflict retries from the newer cluster
	}
	c.recorder.Event(cluster, corev1.EventTypeNormal, ReasonTaintClusterSucceed,
		fmt.Sprintf("Update Cluster(%s) with taints(%s) succeed", name, describe(taints)))
	return nil
}
