// Package clusterstatus keeps the status of push clusters: the Ready and
// CompleteAPIEnablements conditions, the Kubernetes version, the served APIs,
// and node and resource summaries from trimmed member informers.
package clusterstatus

import (
	"context"
	"errors"
	"time"

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
	// forgetClient drops the member's client; forgetInformers stops its
	// informers.
	forgetClient    func(name string)
	forgetInformers func(name string)
	beats           *heartbeats
	queue           workqueue.TypedRateLimitingInterface[string]
	opts            Options

	// The sub-reconcilers, each filling its part of the one status patch,
	// in the order reconcile runs them (reconcile.go).
	ready    readyReconciler
	apis     apisReconciler
	summary  summaryReconciler
	failures *failureThreshold
}

// setReconcilers builds the sub-reconcilers over the controller's options.
// memberClient returns the member's client; informers returns the member's
// informers, started on its client when they are not running.
func (c *Controller) setReconcilers(memberClient func(*clusterv1alpha1.Cluster) (*member.Client, error),
	informers func(name string, client *member.Client) Informers, now func() time.Time) {
	c.ready = readyReconciler{memberClient: memberClient, readyz: getReadyz}
	c.apis = apisReconciler{version: serverVersion, resources: serverResources}
	c.summary = summaryReconciler{informers: informers, now: now, timeout: c.opts.CacheSyncTimeout}
	c.failures = newFailureThreshold(c.opts.FailureThreshold, now)
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
		beats:           newHeartbeats(host, opts.LeaseDuration, opts.Interval),
		clusters:        informer.Lister(),
		synced:          informer.Informer().HasSynced,
		client:          client,
		forgetClient:    members.Forget,
		forgetInformers: hub.Forget,
		queue:           worker.NewQueue(ControllerName),
		opts:            opts,
	}
	c.setReconcilers(members.Get, func(name string, client *member.Client) Informers {
		return hub.Ensure(name, client)
	}, time.Now)
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

// reports tells whether this controller reports cluster: the agent's own
// cluster in an agent; push clusters on the control plane (the agent of a
// pull cluster reports its status itself).
func (c *Controller) reports(cluster *clusterv1alpha1.Cluster) bool {
	if c.opts.Agent != "" {
		return cluster.Name == c.opts.Agent
	}
	return cluster.Spec.SyncMode == clusterv1alpha1.Push
}
