// Package placementdecision publishes, for every ResourceBinding and
// ClusterResourceBinding, the clusters the scheduler chose as
// PlacementDecisions of the SIG-Multicluster Cluster Inventory API
// (KEP-5313) on the host, so tools that follow placement decisions can
// follow Flotilla's scheduler: a ResourceBinding's in its namespace, a
// ClusterResourceBinding's in the inventory namespace, each decision
// referring to the cluster's ClusterProfile (inventory.Decisions). Slices
// are written only when they differ, and deleted with their binding or
// when the decision needs fewer. Only slices labelled with Flotilla as
// their manager are touched.
package placementdecision

import (
	"context"
	"strings"

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
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/hostnamespace"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/inventory"
	"github.com/flotilla-io/flotilla/member"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "placement-decision"

const (
	kindRB  = "ResourceBinding"
	kindCRB = "ClusterResourceBinding"
	// byBinding indexes the slices by the binding they follow (their
	// inventory.AnnotationBinding), which is also the queue's key.
	byBinding = "binding"
)

// Controller keeps the PlacementDecisions of the bindings.
type Controller struct {
	rbs       worklisters.ResourceBindingLister
	crbs      worklisters.ClusterResourceBindingLister
	clusters  clusterlisters.ClusterLister
	slices    cache.Indexer
	synced    []cache.InformerSynced
	factory   dynamicinformer.DynamicSharedInformerFactory
	client    dynamic.NamespaceableResourceInterface
	host      kubernetes.Interface
	namespace string
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New returns the controller publishing the decisions of the bindings,
// those of ClusterResourceBindings and the profiles they refer to in
// namespace.
func New(rbs workinformers.ResourceBindingInformer, crbs workinformers.ClusterResourceBindingInformer, clusters clusterinformers.ClusterInformer,
	hostDynamic dynamic.Interface, host kubernetes.Interface, namespace string) (*Controller, error) {
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(hostDynamic, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = labels.SelectorFromSet(labels.Set{multiclusterv1alpha1.LabelClusterManager: inventory.Manager}).String()
	})
	decisions := factory.ForResource(multiclusterv1alpha1.PlacementDecisions)
	// One slice per binding at least: kept compact (metadata without
	// managedFields, the slice as JSON), decoded when its binding is
	// reconciled.
	if err := decisions.Informer().SetTransform(member.CompactAll); err != nil {
		return nil, err
	}
	if err := decisions.Informer().AddIndexers(cache.Indexers{byBinding: func(obj any) ([]string, error) {
		if m, ok := obj.(metav1.Object); ok && m.GetAnnotations()[inventory.AnnotationBinding] != "" {
			return []string{m.GetAnnotations()[inventory.AnnotationBinding]}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	c := &Controller{
		rbs: rbs.Lister(), crbs: crbs.Lister(), clusters: clusters.Lister(),
		slices:    decisions.Informer().GetIndexer(),
		synced:    []cache.InformerSynced{rbs.Informer().HasSynced, crbs.Informer().HasSynced, clusters.Informer().HasSynced, decisions.Informer().HasSynced},
		factory:   factory,
		client:    hostDynamic.Resource(multiclusterv1alpha1.PlacementDecisions),
		host:      host,
		namespace: namespace,
		queue:     worker.NewQueue(ControllerName),
	}
	bindingHandler := func(kind string) cache.ResourceEventHandler {
		add := func(obj any) {
			if o, ok := tombstone(obj).(metav1.Object); ok {
				c.queue.Add(key(kind, o.GetNamespace(), o.GetName()))
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: add, DeleteFunc: add, UpdateFunc: func(old, cur any) {
			if placementChanged(old, cur) {
				add(cur)
			}
		}}
	}
	if _, err := rbs.Informer().AddEventHandler(bindingHandler(kindRB)); err != nil {
		return nil, err
	}
	if _, err := crbs.Informer().AddEventHandler(bindingHandler(kindCRB)); err != nil {
		return nil, err
	}
	// A cluster that comes or goes changes the decisions that name it:
	// rare, so every binding is looked at again. The clusters of the
	// informer's first list are not news: every binding is queued by its
	// own informer at start.
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				c.enqueueAll()
			}
		},
		DeleteFunc: func(any) { c.enqueueAll() },
		UpdateFunc: func(old, cur any) {
			if (old.(metav1.Object).GetDeletionTimestamp() == nil) != (cur.(metav1.Object).GetDeletionTimestamp() == nil) {
				c.enqueueAll()
			}
		}}); err != nil {
		return nil, err
	}
	slice := func(obj any) {
		if m, ok := tombstone(obj).(metav1.Object); ok && m.GetAnnotations()[inventory.AnnotationBinding] != "" {
			c.queue.Add(m.GetAnnotations()[inventory.AnnotationBinding])
		}
	}
	_, err := decisions.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: slice, UpdateFunc: func(_, cur any) { slice(cur) }, DeleteFunc: slice})
	return c, err
}

// Run publishes decisions until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.factory.Start(ctx.Done())
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

func (c *Controller) enqueueAll() {
	rbs, _ := c.rbs.List(labels.Everything()) // a cache list: never fails
	for _, rb := range rbs {
		c.queue.Add(key(kindRB, rb.Namespace, rb.Name))
	}
	crbs, _ := c.crbs.List(labels.Everything())
	for _, crb := range crbs {
		c.queue.Add(key(kindCRB, "", crb.Name))
	}
}

// reconcile makes the slices of the binding named by k what its spec
// says: creates the missing, patches the differing, deletes the extra.
func (c *Controller) reconcile(ctx context.Context, k string) error {
	kind, namespace, name, ok := parseKey(k)
	if !ok {
		return nil // not a key of ours: a slice someone annotated by hand
	}
	p, found, err := c.placement(kind, namespace, name)
	if err != nil {
		return err
	}
	var want []*unstructured.Unstructured
	if found {
		want = inventory.Decisions(p, c.decisionNamespace(namespace), c.namespace, c.exists)
	}
	cur := map[string]*unstructured.Unstructured{}
	objs, err := c.slices.ByIndex(byBinding, k)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if u, ok := member.Unstructured(obj); ok {
			cur[u.GetNamespace()+"/"+u.GetName()] = u
		}
	}
	for _, w := range want {
		id := w.GetNamespace() + "/" + w.GetName()
		have := cur[id]
		delete(cur, id)
		if err := c.write(ctx, have, w); err != nil {
			return err
		}
	}
	for _, extra := range cur {
		err := c.client.Namespace(extra.GetNamespace()).Delete(ctx, extra.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(extra.GetUID())}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
	}
	return nil
}

// write creates want when there is no slice of its name, patches have when
// it differs, and does nothing when it is up to date.
func (c *Controller) write(ctx context.Context, have, want *unstructured.Unstructured) error {
	client := c.client.Namespace(want.GetNamespace())
	if have == nil {
		_, err := client.Create(ctx, want, metav1.CreateOptions{FieldManager: ControllerName})
		if apierrors.IsNotFound(err) && want.GetNamespace() == c.namespace {
			if err := hostnamespace.Ensure(ctx, c.host, c.namespace, ControllerName); err != nil {
				return err
			}
			_, err = client.Create(ctx, want, metav1.CreateOptions{FieldManager: ControllerName})
		}
		switch {
		case apierrors.IsAlreadyExists(err):
			return nil // not labelled ours: another producer's slice of that name is left alone
		case apierrors.IsNotFound(err):
			return nil // the binding's namespace is gone on the host: so is the binding, soon
		}
		return err
	}
	if upToDate(have, want) {
		return nil
	}
	patch, err := (&unstructured.Unstructured{Object: map[string]any{
		"metadata":      map[string]any{"labels": want.GetLabels(), "annotations": want.GetAnnotations()},
		"decisions":     want.Object["decisions"],
		"schedulerName": want.Object["schedulerName"], // nil removes it
	}}).MarshalJSON()
	if err != nil {
		return err
	}
	_, err = client.Patch(ctx, want.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile: its delete event brings it back
	}
	return err
}

// upToDate tells whether the slice have says what want says: the same
// decisions and scheduler, and want's labels and annotations.
func upToDate(have, want *unstructured.Unstructured) bool {
	for k, v := range want.GetLabels() {
		if have.GetLabels()[k] != v {
			return false
		}
	}
	for k, v := range want.GetAnnotations() {
		if have.GetAnnotations()[k] != v {
			return false
		}
	}
	return apiequality.Semantic.DeepEqual(have.Object["decisions"], want.Object["decisions"]) && have.Object["schedulerName"] == want.Object["schedulerName"]
}

// placement reads the binding from the cache; found is false when it is
// gone or being deleted.
func (c *Controller) placement(kind, namespace, name string) (inventory.Placement, bool, error) {
	p := inventory.Placement{Kind: kind, Namespace: namespace, Name: name}
	var (
		meta metav1.Object
		spec *workv1alpha2.ResourceBindingSpec
		id   string
		err  error
	)
	if kind == kindRB {
		var rb *workv1alpha2.ResourceBinding
		if rb, err = c.rbs.ResourceBindings(namespace).Get(name); err == nil {
			meta, spec, id = rb, &rb.Spec, rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
		}
	} else {
		var crb *workv1alpha2.ClusterResourceBinding
		if crb, err = c.crbs.Get(name); err == nil {
			meta, spec, id = crb, &crb.Spec, crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return p, false, nil
	case err != nil:
		return p, false, err
	case meta.GetDeletionTimestamp() != nil:
		return p, false, nil
	}
	p.PermanentID, p.SchedulerName, p.Clusters = id, spec.SchedulerName, spec.Clusters
	return p, true, nil
}

// exists tells whether cluster is a Cluster that is not being deleted.
func (c *Controller) exists(cluster string) bool {
	cl, err := c.clusters.Get(cluster)
	return err == nil && cl.DeletionTimestamp == nil
}

// decisionNamespace is where the decision of a binding in namespace lives:
// there, or, for a ClusterResourceBinding, in the inventory namespace.
func (c *Controller) decisionNamespace(namespace string) string {
	if namespace == "" {
		return c.namespace
	}
	return namespace
}

// placementChanged tells whether an update of a binding changes what its
// decision publishes.
func placementChanged(old, cur any) bool {
	o, ok1 := old.(metav1.Object)
	n, ok2 := cur.(metav1.Object)
	if !ok1 || !ok2 {
		return true
	}
	if (o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil) || !apiequality.Semantic.DeepEqual(o.GetLabels(), n.GetLabels()) {
		return true
	}
	switch o := old.(type) {
	case *workv1alpha2.ResourceBinding:
		n := cur.(*workv1alpha2.ResourceBinding)
		return o.Spec.SchedulerName != n.Spec.SchedulerName || !apiequality.Semantic.DeepEqual(o.Spec.Clusters, n.Spec.Clusters)
	case *workv1alpha2.ClusterResourceBinding:
		n := cur.(*workv1alpha2.ClusterResourceBinding)
		return o.Spec.SchedulerName != n.Spec.SchedulerName || !apiequality.Semantic.DeepEqual(o.Spec.Clusters, n.Spec.Clusters)
	}
	return true
}

// key is the queue's key of a binding, the same words as the slices'
// inventory.AnnotationBinding.
func key(kind, namespace, name string) string {
	return inventory.BindingRef(kind, namespace, name)
}

// parseKey reads a key back.
func parseKey(k string) (kind, namespace, name string, ok bool) {
	kind, ref, found := strings.Cut(k, " ")
	if !found || (kind != kindRB && kind != kindCRB) {
		return "", "", "", false
	}
	if kind == kindCRB {
		return kind, "", ref, ref != ""
	}
	namespace, name, found = strings.Cut(ref, "/")
	return kind, namespace, name, found && namespace != "" && name != ""
}

func tombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
