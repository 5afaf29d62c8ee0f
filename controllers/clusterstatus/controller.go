// Package clusterstatus keeps the status of push clusters: the Ready and
// CompleteAPIEnablements conditions, the Kubernetes version, the served APIs,
// and node and resource summaries from trimmed member informers.
package clusterstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	clusterlisters "github.com/flotilla-io/flotilla/apis/generated/listers/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "cluster-status"

// Reasons and messages of the Ready condition, as Karmada writes them.
const (
	ReasonClusterReady         = "ClusterReady"
	ReasonClusterNotReady      = "ClusterNotReady"
	ReasonClusterNotReachable  = "ClusterNotReachable"
	MessageClusterReady        = "cluster is healthy and ready to accept workloads"
	MessageClusterNotReady     = "cluster is reachable but health endpoint responded without ok"
	MessageClusterNotReachable = "cluster is not reachable"
)

// Options tune the controller.
type Options struct {
	// Interval between two status updates of a cluster.
	Interval time.Duration
	// FailureThreshold is how long a cluster must fail its health check
	// before it is reported not ready (one failed probe is not enough).
	FailureThreshold time.Duration
	// Workers is the number of clusters probed at once.
	Workers int
	// CacheSyncTimeout bounds the wait for a member's node and pod caches
	// to list (Karmada's --cluster-cache-sync-timeout): until they have, the
	// cluster's status is not written, so Ready=True first arrives with its
	// resource summary and the scheduler never sees a Ready cluster that
	// can run nothing. Zero: 2 minutes.
	CacheSyncTimeout time.Duration
	// LeaseDuration is the duration of each cluster's heartbeat Lease.
	LeaseDuration time.Duration
	// Agent, when set, is the cluster of the flotilla-agent this controller
	// runs in: it reports that cluster (a pull cluster) and no other.
	// Empty: the control plane's controller, which reports push clusters.
	Agent string
}

// errListing: the member's caches are still listing; the status waits.
var errListing = errors.New("member caches still listing")

// cacheSyncPoll is how often a cluster whose caches are listing is looked at.
const cacheSyncPoll = 500 * time.Millisecond

// Controller updates the status of push clusters.
type Controller struct {
	clusters clusterlisters.ClusterLister
	synced   cache.InformerSynced
	client   versioned.Interface
	// memberClient returns the member's client; forgetClient drops it.
	memberClient func(*clusterv1alpha1.Cluster) (*member.Client, error)
	forgetClient func(name string)
	// informers returns the member's informers, started on its client
	// when they are not running; forgetInformers stops them.
	informers       func(name string, client *member.Client) Informers
	forgetInformers func(name string)
	beats           *heartbeats
	queue           workqueue.TypedRateLimitingInterface[string]
	opts            Options
	now             func() time.Time

	mu           sync.Mutex
	firstFailure map[string]time.Time
}

// New returns the controller.
// host, when set, receives the heartbeat Leases.
// members gives the member clients and hub the node and pod informers,
// shared with every other reader of the process.
func New(informer clusterinformers.ClusterInformer, client versioned.Interface, host kubernetes.Interface, members *member.Cache, hub *member.Hub, opts Options) (*Controller, error) {
	if opts.LeaseDuration == 0 {
		opts.LeaseDuration = 40 * time.Second
	}
	if opts.CacheSyncTimeout <= 0 {
		opts.CacheSyncTimeout = 2 * time.Minute
	}
	c := &Controller{
		beats:        &heartbeats{host: host, duration: opts.LeaseDuration, interval: opts.Interval, running: map[string]context.CancelFunc{}},
		clusters:     informer.Lister(),
		synced:       informer.Informer().HasSynced,
		client:       client,
		memberClient: members.Get,
		forgetClient: members.Forget,
		informers: func(name string, client *member.Client) Informers {
			return hub.Ensure(name, client)
		},
		forgetInformers: hub.Forget,
		queue:           worker.NewQueue(ControllerName),
		opts:            opts,
		now:             time.Now,
		firstFailure:    map[string]time.Time{},
	}
	enqueue := worker.EnqueueKey(c.queue)
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(old, cur any) {
			// Status updates come back through the informer; only spec
			// changes need a probe before the next tick.
			if old.(*clusterv1alpha1.Cluster).Generation != cur.(*clusterv1alpha1.Cluster).Generation {
				enqueue(cur)
			}
		},
		DeleteFunc: enqueue,
	})
	return c, err
}

// Run probes clusters until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	worker.Run(ctx, c.queue, []cache.InformerSynced{c.synced}, c.opts.Workers, c.reconcile)
}

func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && cluster.DeletionTimestamp != nil) {
		c.forgetInformers(name)
		c.forgetClient(name)
		c.beats.stop(name)
		return nil
	}
	if err != nil {
		return err
	}
	if !c.reports(cluster) {
		return nil
	}
	defer c.queue.AddAfter(name, c.opts.Interval)
	c.beats.start(name)

	status := cluster.Status.DeepCopy()
	ready, err := c.observe(ctx, cluster, status)
	if errors.Is(err, errListing) {
		return nil
	} else if err != nil {
		return err
	}
	if !ready && c.withinThreshold(name) && meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		// One failed probe is not an outage: keep reporting what we had.
		return nil
	}
	if ready {
		c.clearFailure(name)
	}
	if apiequality.Semantic.DeepEqual(*status, cluster.Status) {
		return nil
	}
	// This controller is the only writer of a push cluster's status: a merge
	// patch of the whole status needs no resourceVersion and never conflicts
	// with the cluster controller's spec and metadata writes.
	patch, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = c.client.ClusterV1alpha1().Clusters().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName}, "status")
	return err
}

// reports tells whether this controller reports cluster: the agent's own
// cluster in an agent; push clusters on the control plane (the agent of a
// pull cluster reports its status itself).
func (c *Controller) reports(cluster *clusterv1alpha1.Cluster) bool {
	if c.opts.Agent != "" {
		return cluster.Name == c.opts.Agent
	}
	return cluster.Spec.SyncMode == clusterv1alpha1.Push
}

// observe probes the member and fills status; it returns whether the
// cluster is healthy, or an error when the status must not be written
// this round (the member's caches have not listed yet).
func (c *Controller) observe(ctx context.Context, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus) (bool, error) {
	setReady := func(s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: s, Reason: reason, Message: msg, ObservedGeneration: cluster.Generation})
	}
	client, err := c.memberClient(cluster)
	if err != nil {
		setReady(metav1.ConditionFalse, ReasonClusterNotReachable, err.Error())
		return false, nil
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body, err := client.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(pctx)
	switch {
	case err != nil && len(body) == 0 && !apierrors.IsInternalError(err) && !isHTTPStatus(err):
		setReady(metav1.ConditionFalse, ReasonClusterNotReachable, MessageClusterNotReachable)
		return false, nil
	case err != nil || strings.TrimSpace(string(body)) != "ok":
		setReady(metav1.ConditionFalse, ReasonClusterNotReady, MessageClusterNotReady)
		return false, nil
	}
	setReady(metav1.ConditionTrue, ReasonClusterReady, MessageClusterReady)

	if v, err := client.Clientset.Discovery().ServerVersion(); err == nil {
		status.KubernetesVersion = v.GitVersion
	}
	enablements, complete := apiEnablements(client)
	if enablements != nil {
		status.APIEnablements = enablements
	}
	cond := metav1.Condition{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: metav1.ConditionTrue, Reason: "CompleteAPIEnablements", Message: "collected complete APIs from member cluster", ObservedGeneration: cluster.Generation}
	if !complete {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "IncompleteAPIEnablements", "collected partial APIs from member cluster"
	}
	meta.SetStatusCondition(&status.Conditions, cond)

	mc := c.informers(cluster.Name, client)
	switch synced, late := listed(mc, c.now(), c.opts.CacheSyncTimeout); {
	case late:
		return false, fmt.Errorf("the caches of cluster %s's nodes and pods did not sync within %s", cluster.Name, c.opts.CacheSyncTimeout)
	case !synced:
		// Look again soon rather than hold a worker.
		c.queue.AddAfter(cluster.Name, cacheSyncPoll)
		return false, errListing
	}
	if status.NodeSummary, status.ResourceSummary, err = summaries(mc, cluster.Spec.ResourceModels); err != nil {
		return false, err
	}
	return true, nil
}

// apiEnablements lists the member's group versions and resources, sorted,
// without subresources. complete is false when some group failed discovery.
func apiEnablements(client *member.Client) ([]clusterv1alpha1.APIEnablement, bool) {
	_, lists, err := client.Clientset.Discovery().ServerGroupsAndResources()
	if len(lists) == 0 {
		return nil, false
	}
	out := make([]clusterv1alpha1.APIEnablement, 0, len(lists))
	for _, l := range lists {
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		slices.SortFunc(e.Resources, func(a, b clusterv1alpha1.APIResource) int { return strings.Compare(a.Name, b.Name) })
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b clusterv1alpha1.APIEnablement) int { return strings.Compare(a.GroupVersion, b.GroupVersion) })
	return out, err == nil
}

func isHTTPStatus(err error) bool {
	_, ok := err.(apierrors.APIStatus)
	return ok
}

// withinThreshold records a failure and reports whether the cluster has
// been failing for less than the threshold.
func (c *Controller) withinThreshold(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	first, ok := c.firstFailure[name]
	if !ok {
		first = c.now()
		c.firstFailure[name] = first
	}
	return c.now().Sub(first) < c.opts.FailureThreshold
}

func (c *Controller) clearFailure(name string) {
	c.mu.Lock()
	delete(c.firstFailure, name)
	c.mu.Unlock()
}
