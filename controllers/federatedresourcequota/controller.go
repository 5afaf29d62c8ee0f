package federatedresourcequota

import (
	"context"
	"sort"
	"sync"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	policyinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/policy/v1alpha1"
	workinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha1"
	bindinginformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/work/v1alpha2"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	policylisters "github.com/flotilla-io/flotilla/apis/generated/listers/policy/v1alpha1"
	bindinglisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
)

// Names of the controllers in --controllers, as in Karmada.
const (
	SyncControllerName   = "federatedResourceQuotaSync"
	StatusControllerName = "federatedResourceQuotaStatus"
)

// FieldManager is the field manager of the controllers' writes: the Works
// and the quotas' status.
const FieldManager = "flotilla-federatedresourcequota"

// Reasons of the events recorded on a FederatedResourceQuota (Karmada's
// pkg/events). Unlike Karmada, which records a success at every reconcile,
// a success is recorded only when something was written.
const (
	// EventReasonSyncWorkSucceed (Normal): the quota's Works were written.
	EventReasonSyncWorkSucceed = "SyncWorkSucceed"
	// EventReasonSyncWorkFailed (Warning): writing or deleting a Work failed.
	EventReasonSyncWorkFailed = "SyncWorkFailed"
	// EventReasonAggregateStatusSucceed (Normal): status.aggregatedStatus
	// was updated from the members.
	EventReasonAggregateStatusSucceed = "AggregateStatusSucceed"
	// EventReasonAggregateStatusFailed (Warning): the members' status could
	// not be read or written.
	EventReasonAggregateStatusFailed = "AggregateStatusFailed"
	// EventReasonCollectOverallStatusSucceed (Normal): status.overall or
	// status.overallUsed was updated.
	EventReasonCollectOverallStatusSucceed = "CollectOverallStatusSucceed"
	// EventReasonCollectOverallStatusFailed (Warning): they could not be written.
	EventReasonCollectOverallStatusFailed = "CollectOverallStatusFailed"
)

// SyncController writes the Works of the quotas' static assignments.
type SyncController struct {
	quotas   policylisters.FederatedResourceQuotaLister
	works    cache.Indexer
	clusters clusterlisters.ClusterLister
	client   versioned.Interface
	recorder record.EventRecorder
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
}

// NewSync returns the sync controller. client reaches flotilla-apiserver
// (the Works); events go to recorder.
func NewSync(quotas policyinformers.FederatedResourceQuotaInformer, works workinformers.WorkInformer,
	clusters clusterinformers.ClusterInformer, client versioned.Interface, recorder record.EventRecorder) (*SyncController, error) {
	if err := addWorkIndex(works.Informer()); err != nil {
		return nil, err
	}
	c := &SyncController{
		quotas: quotas.Lister(), works: works.Informer().GetIndexer(), clusters: clusters.Lister(),
		client: client, recorder: recorder,
		synced: []cache.InformerSynced{quotas.Informer().HasSynced, works.Informer().HasSynced, clusters.Informer().HasSynced},
		queue:  worker.NewQueue(SyncControllerName),
	}
	add := worker.EnqueueKey(c.queue)
	if _, err := quotas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add,
		UpdateFunc: func(old, obj any) {
			// Status writes change none of these.
			o, n := old.(*policyv1alpha1.FederatedResourceQuota), obj.(*policyv1alpha1.FederatedResourceQuota)
			if o.Generation != n.Generation || o.UID != n.UID || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				add(obj)
			}
		},
		DeleteFunc: add,
	}); err != nil {
		return nil, err
	}
	// A Work listed at start whose quota is gone is removed; one changed
	// or deleted by someone else is put back. The execution controller's
	// status writes change neither the generation nor the labels.
	onWork := enqueueWorkQuota(c.queue)
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onWork,
		UpdateFunc: func(old, obj any) {
			o, n := old.(*workv1alpha1.Work), obj.(*workv1alpha1.Work)
			if o.Generation != n.Generation || !labels.Equals(o.Labels, n.Labels) || (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) {
				onWork(old)
				onWork(obj)
			}
		},
		DeleteFunc: onWork,
	}); err != nil {
		return nil, err
	}
	// A cluster that joins gets the Works of the quotas assigning to it
	// (Karmada reacts to cluster creation only, too).
	if _, err := clusters.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if cl, ok := obj.(*clusterv1alpha1.Cluster); ok {
				c.enqueueAssigning(cl.Name)
			}
		},
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run reconciles until ctx ends.
func (c *SyncController) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// enqueueAssigning queues the quotas with a static assignment to cluster.
func (c *SyncController) enqueueAssigning(cluster string) {
	list, err := c.quotas.List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range list {
		if _, ok := assignments(q.Spec)[cluster]; ok {
			c.queue.Add(q.Namespace + "/" + q.Name)
		}
	}
}

// StatusController collects the member ResourceQuotas' status into the
// quotas' status, and what the namespace's ResourceBindings use into
// status.overallUsed.
type StatusController struct {
	quotas   policylisters.FederatedResourceQuotaLister
	works    cache.Indexer
	bindings bindinglisters.ResourceBindingLister
	client   versioned.Interface
	recorder record.EventRecorder
	synced   []cache.InformerSynced
	queue    workqueue.TypedRateLimitingInterface[string]
	written  *writtenStatuses
}

// NewStatus returns the status controller. client reaches
// flotilla-apiserver (the quotas' status subresource); events go to
// recorder.
func NewStatus(quotas policyinformers.FederatedResourceQuotaInformer, works workinformers.WorkInformer,
	bindings bindinginformers.ResourceBindingInformer, client versioned.Interface, recorder record.EventRecorder) (*StatusController, error) {
	if err := addWorkIndex(works.Informer()); err != nil {
		return nil, err
	}
	c := &StatusController{
		quotas: quotas.Lister(), works: works.Informer().GetIndexer(), bindings: bindings.Lister(), client: client, recorder: recorder,
		synced:  []cache.InformerSynced{quotas.Informer().HasSynced, works.Informer().HasSynced, bindings.Informer().HasSynced},
		queue:   worker.NewQueue(StatusControllerName),
		written: &writtenStatuses{m: map[string]writtenStatus{}},
	}
	add := worker.EnqueueKey(c.queue)
	if _, err := quotas.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: add,
		UpdateFunc: func(old, obj any) {
			// The spec sets status.overall and which clusters count; this
			// controller's own status writes need no second look.
			o, n := old.(*policyv1alpha1.FederatedResourceQuota), obj.(*policyv1alpha1.FederatedResourceQuota)
			if o.Generation != n.Generation || o.UID != n.UID {
				add(obj)
			}
		},
		DeleteFunc: func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				c.written.forget(key)
			}
		},
	}); err != nil {
		return nil, err
	}
	onWork := enqueueWorkQuota(c.queue)
	if _, err := works.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onWork,
		UpdateFunc: func(old, obj any) {
			o, n := old.(*workv1alpha1.Work), obj.(*workv1alpha1.Work)
			if statusChanged(o, n) {
				onWork(old)
				onWork(obj)
			}
		},
		DeleteFunc: onWork,
	}); err != nil {
		return nil, err
	}
	// overallUsed follows the bindings' scheduling results and
	// requirements as soon as they are written.
	onBinding := c.enqueueNamespaceOf
	if _, err := bindings.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onBinding,
		UpdateFunc: func(old, obj any) {
			o, n := old.(*workv1alpha2.ResourceBinding), obj.(*workv1alpha2.ResourceBinding)
			if !apiequality.Semantic.DeepEqual(bindingUsage(o), bindingUsage(n)) {
				onBinding(obj)
			}
		},
		DeleteFunc: onBinding,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// enqueueNamespaceOf queues the quotas of the namespace of a binding.
func (c *StatusController) enqueueNamespaceOf(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	b, ok := obj.(*workv1alpha2.ResourceBinding)
	if !ok {
		return
	}
	list, err := c.quotas.FederatedResourceQuotas(b.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, q := range list {
		c.queue.Add(q.Namespace + "/" + q.Name)
	}
}

// Run reconciles until ctx ends.
func (c *StatusController) Run(ctx context.Context, workers int) {
	worker.Run(ctx, c.queue, c.synced, workers, c.reconcile)
}

// statusChanged tells whether a Work update may change what is collected
// from it: its reflected status or Applied condition, its labels, or its
// deletion.
func statusChanged(o, n *workv1alpha1.Work) bool {
	if (o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) || !labels.Equals(o.Labels, n.Labels) {
		return true
	}
	if len(o.Status.ManifestStatuses) != len(n.Status.ManifestStatuses) || applied(o) != applied(n) {
		return true
	}
	for i := range o.Status.ManifestStatuses {
		if string(rawOf(o.Status.ManifestStatuses[i].Status)) != string(rawOf(n.Status.ManifestStatuses[i].Status)) {
			return true
		}
	}
	return false
}

// writtenStatus is the status last written to a quota, and the
// resourceVersion of the quota it was computed from.
type writtenStatus struct {
	fromResourceVersion string
	status              policyv1alpha1.FederatedResourceQuotaStatus
}

// writtenStatuses remember the last status write per quota: until the
// cache holds that write, the quota it holds still has the resourceVersion
// the write was made from, and the status written is the current one. So
// a reconcile before the cache catches up writes (and records events)
// nothing twice.
type writtenStatuses struct {
	mu sync.Mutex
	m  map[string]writtenStatus
}

// current returns the quota's status as last stored: what was written
// from its resourceVersion, or its own.
func (w *writtenStatuses) current(key string, q *policyv1alpha1.FederatedResourceQuota) policyv1alpha1.FederatedResourceQuotaStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s, ok := w.m[key]; ok && s.fromResourceVersion == q.ResourceVersion {
		return s.status
	}
	delete(w.m, key)
	return q.Status
}

func (w *writtenStatuses) wrote(key, fromResourceVersion string, s policyv1alpha1.FederatedResourceQuotaStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m[key] = writtenStatus{fromResourceVersion: fromResourceVersion, status: s}
}

func (w *writtenStatuses) forget(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// worksByQuota indexes Works by the "<namespace>/<name>" of the quota
// their labels name.
const worksByQuota = "federatedresourcequota"

// quotaKeyOf returns the key of the quota a Work belongs to; "" for a Work
// of anything else.
func quotaKeyOf(w *workv1alpha1.Work) string {
	return works.OwnerKey(w, policyv1alpha1.FederatedResourceQuotaNamespaceLabel, policyv1alpha1.FederatedResourceQuotaNameLabel)
}

var indexByQuota = works.OwnerIndexFunc(policyv1alpha1.FederatedResourceQuotaNamespaceLabel, policyv1alpha1.FederatedResourceQuotaNameLabel)

// addWorkIndex adds the worksByQuota index to the Work informer unless the
// other controller of the package already did.
func addWorkIndex(inf cache.SharedIndexInformer) error {
	return works.AddIndex(inf, worksByQuota, indexByQuota)
}

// quotaWorks returns the Works of the quota with key, from the index,
// sorted by namespace.
func quotaWorks(idx cache.Indexer, key string) ([]*workv1alpha1.Work, error) {
	out, err := works.Indexed(idx, worksByQuota, key)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, nil
}

// enqueueWorkQuota returns an event handler function queueing the quota
// of a Work.
func enqueueWorkQuota(queue workqueue.TypedRateLimitingInterface[string]) func(any) {
	return func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if w, ok := obj.(*workv1alpha1.Work); ok {
			if key := quotaKeyOf(w); key != "" {
				queue.Add(key)
			}
		}
	}
}
