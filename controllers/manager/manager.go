// Package manager starts the controllers embedded in flotilla-apiserver:
// which ones (--controllers), with what clients, under leader election.
package manager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"

	// Queue depths and client requests on /metrics: the benchmarks read
	// them to tell when the controllers are idle and what they wrote.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/descheduler"
	"github.com/flotilla-io/flotilla/controllers/eviction"
	"github.com/flotilla-io/flotilla/controllers/federatedhpa"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/trim"
	"github.com/flotilla-io/flotilla/estimator/assumed"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/interpreter/informed"
	"github.com/flotilla-io/flotilla/interpreter/lua"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/podautoscaler"
	"github.com/flotilla-io/flotilla/telemetry"
)

// Options configure the controllers.
type Options struct {
	// Controllers names the controllers to run: "*" for all those on by
	// default, "name" to add one, "-name" to remove one.
	Controllers []string
	// LeaderElect runs the controllers only in the replica holding the lease.
	LeaderElect bool
	// MultiplePodTemplatesScheduling schedules workloads made of several
	// pod templates as a whole, from their components (Karmada's alpha
	// feature gate of that name).
	MultiplePodTemplatesScheduling bool
	// ResourceQuotaEstimate makes replica requirements carry the replicas'
	// namespace and priority class, so the estimator and Karmada's tools
	// count the members' ResourceQuotas (Karmada's alpha feature gate of
	// that name).
	ResourceQuotaEstimate bool
	// LeaseNamespace and LeaseName name the host Lease.
	LeaseNamespace, LeaseName string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election
	// (client-go's, with Karmada's defaults 15s, 10s, 2s): a standby takes
	// the lease over at most LeaseDuration plus two RetryPeriods after the
	// leader's last renewal (it sees renewals only when it polls).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ClusterStatusUpdateFrequency is how often cluster status is probed.
	ClusterStatusUpdateFrequency time.Duration
	// ClusterFailureThreshold is how long a cluster fails before it is not ready.
	ClusterFailureThreshold time.Duration
	// ClusterCacheSyncTimeout bounds the wait for a member's node and pod
	// caches before its status (and first Ready) is written.
	ClusterCacheSyncTimeout time.Duration
	// ClusterMonitorGracePeriod is how long a cluster's heartbeat may be
	// stale before its status becomes Unknown.
	ClusterMonitorGracePeriod time.Duration
	// MaxClustersPerToken is how many Pull clusters one bootstrap token not
	// bound to a cluster name may register (0: no limit).
	MaxClustersPerToken int
	// SkippedPropagatingNamespaces are regular expressions of namespaces
	// not propagated automatically.
	SkippedPropagatingNamespaces []string
	// HPA tunes the FederatedHPA controller (Karmada's and
	// kube-controller-manager's --horizontal-pod-autoscaler-* flags).
	HPA federatedhpa.Options
	// EnableNoExecuteTaintEviction runs the taint manager, and lets
	// ClusterTaintPolicies add NoExecute taints.
	EnableNoExecuteTaintEviction bool
	// Taints tune the taint manager.
	Taints eviction.TaintOptions
	// GracefulEvictionTimeout is the grace period of eviction tasks
	// without their own.
	GracefulEvictionTimeout time.Duration
	// Descheduler tunes the descheduler (Karmada's karmada-descheduler
	// flags).
	Descheduler descheduler.Options
	// AssumptionTTL is how long the scheduler counts what it assigned a
	// member as used while the member does not show it (0: it does not).
	AssumptionTTL time.Duration
	// ClusterProfileNamespace is the inventory namespace of the host where
	// the ClusterProfiles of the clusters are published.
	ClusterProfileNamespace string
	// ClusterProfileServer is the control plane's URL the profiles' access
	// provider points consumers at (its clusters/{name}/proxy); empty: the
	// host's URL as the controllers reach it.
	ClusterProfileServer string
}

// NewOptions returns the defaults.
func NewOptions() Options {
	return Options{
		Controllers: []string{"*"}, LeaderElect: true,
		LeaseNamespace: names.SystemNamespace, LeaseName: names.ControllersLease,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		ClusterStatusUpdateFrequency: 10 * time.Second, ClusterFailureThreshold: 30 * time.Second, ClusterCacheSyncTimeout: 2 * time.Minute,
		ClusterMonitorGracePeriod: 40 * time.Second, MaxClustersPerToken: 10, SkippedPropagatingNamespaces: []string{"kube-.*"},
		ClusterProfileNamespace: names.InventoryNamespace,
		HPA:                     federatedhpa.Options{SyncPeriod: 15 * time.Second, Algorithm: podautoscaler.DefaultConfig()},
		Taints:                  eviction.TaintOptions{PurgeMode: policyv1alpha1.PurgeModeGracefully, UnhealthyClusterThreshold: 0.55, EvictionRate: 50},
		GracefulEvictionTimeout: eviction.DefaultGracefulEvictionTimeout,
		Descheduler:             descheduler.DefaultOptions(),
		AssumptionTTL:           assumed.DefaultTTL,
	}
}

// Context is what every controller is built from.
type Context struct {
	Options Options
	// Karmada reaches flotilla-apiserver's own APIs (loopback).
	Karmada          versioned.Interface
	KarmadaInformers externalversions.SharedInformerFactory
	// Host reaches the host API server: templates, namespaces, secrets.
	Host          kubernetes.Interface
	HostInformers informers.SharedInformerFactory
	// HostDynamic and HostMapper reach resource templates of any kind.
	HostDynamic dynamic.Interface
	HostMapper  meta.ResettableRESTMapper
	// HostScales reaches the scale subresource of templates of any kind.
	HostScales scale.ScalesGetter
	// HostConfig is the host's client configuration (metrics clients of
	// the control plane are built from it).
	HostConfig *rest.Config
	// Templates watches the host's resource templates of the kinds policies select.
	Templates *templates.Informers
	// Members builds member clients from Clusters and their secrets.
	Members *member.Cache
	// Interpreter interprets resources of every kind.
	Interpreter interpreter.Interpreter
	// Customizations are the Lua interpreters of
	// ResourceInterpreterCustomizations; controllers that cache
	// interpretations register for their changes.
	Customizations *lua.Customizations
	// interpreterSynced are the informers the interpreter reads.
	interpreterSynced []cache.InformerSynced
	// warmMu orders a standby's last warmTemplates before its takeover.
	warmMu sync.Mutex
	// Hub runs the members' pod, node and quota informers for every reader
	// of the process (cluster status, the scheduler's estimate,
	// FederatedHPA); its owner runs it.
	Hub *member.Hub
	// Recorder records events on templates and Karmada objects, in the host.
	Recorder record.EventRecorder
}

// InitFunc builds a controller and starts it in the background; it returns
// when the controller is running.
type InitFunc func(ctx context.Context, c *Context) error

// Enabled reports whether name is enabled by the --controllers list: named
// there, or covered by "*" unless it is off by default (DisabledByDefault).
func Enabled(name string, list []string) bool {
	if slices.Contains(list, "-"+name) {
		return false
	}
	return slices.Contains(list, name) || (slices.Contains(list, "*") && !disabledByDefault[name])
}

// DisabledByDefault returns the controllers "*" does not enable, sorted.
func DisabledByDefault() []string {
	var names []string
	for n := range disabledByDefault {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Validate checks that every name in list is a known controller.
func Validate(list []string) error {
	known := Controllers()
	for _, n := range list {
		n = strings.TrimPrefix(n, "-")
		if _, ok := known[n]; !ok && n != "*" {
			return fmt.Errorf("unknown controller %q; known: %s", n, strings.Join(Names(), ", "))
		}
	}
	return nil
}

// Names returns the known controllers, sorted.
func Names() []string {
	var names []string
	for n := range Controllers() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// KarmadaClients are how the controllers reach flotilla-apiserver's own
// APIs: in process (inprocess.Storage) when they are embedded.
type KarmadaClients struct {
	// Client makes their requests; what it returns is theirs to change.
	Client versioned.Interface
	// Informers lists and watches for their informers. Shared says that
	// it hands out objects others hold too (the server's storage in
	// process), which no informer transform may change.
	Informers versioned.Interface
	Shared    bool
	// Interpreter, when set, is the process's interpreter (built once by
	// server assembly over its informers, for every reader: informed.New),
	// with its customizations and the syncs to wait for; nil: NewContext
	// builds one over the controllers' informers.
	Interpreter       interpreter.Interpreter
	Customizations    *lua.Customizations
	InterpreterSynced []cache.InformerSynced
}

// NewContext builds the clients of the controllers: karmada reaches
// flotilla-apiserver, host is the host API server's configuration.
func NewContext(opts Options, karmada KarmadaClients, host *rest.Config) (*Context, error) {
	host = rest.CopyConfig(host)
	host.QPS, host.Burst = 1000, 2000
	// Events have their own client and budget, so a burst of them never
	// delays a controller's write.
	eventsConfig := rest.CopyConfig(host)
	eventsConfig.QPS, eventsConfig.Burst = 100, 200
	events, err := kubernetes.NewForConfig(eventsConfig)
	if err != nil {
		return nil, err
	}
	kc := karmada.Client
	hc, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(host)
	if err != nil {
		return nil, err
	}
	recorder, _, err := telemetry.NewEventRecorder(events.CoreV1().Events(""), corev1.EventSource{Component: "flotilla-controllers"})
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	// No controller reads managedFields: the informers keep none.
	trimKarmada := trim.ManagedFields
	if karmada.Shared {
		trimKarmada = trim.ManagedFieldsOfShared
	}
	karmadaInformers := externalversions.NewSharedInformerFactoryWithOptions(karmada.Informers, 0, externalversions.WithTransform(trimKarmada))
	hostInformers := informers.NewSharedInformerFactoryWithOptions(hc, 0, informers.WithTransform(trim.ManagedFields))
	customizations, interp, interpSynced := karmada.Customizations, karmada.Interpreter, karmada.InterpreterSynced
	if interp == nil {
		if customizations, interp, interpSynced, err = informed.New(karmadaInformers, hostInformers); err != nil {
			return nil, err
		}
	}
	c := &Context{
		Options:           opts,
		Karmada:           kc,
		KarmadaInformers:  karmadaInformers,
		Host:              hc,
		HostInformers:     hostInformers,
		HostDynamic:       dc,
		HostMapper:        mapper,
		HostScales:        scale.New(hc.CoreV1().RESTClient(), mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(disco)),
		HostConfig:        host,
		Templates:         templates.New(dc, mapper),
		Interpreter:       interp,
		Customizations:    customizations,
		interpreterSynced: interpSynced,
		Recorder:          recorder,
	}
	return c, nil
}

// UseMembers has the controllers reach members through the member client
// cache and hub of the rest of the process (flotilla-apiserver's search,
// metrics and proxy), so that each member has one client and one watch
// per kind. The hub is run by its owner. Run needs them.
func (c *Context) UseMembers(members *member.Cache, hub *member.Hub) {
	c.Members, c.Hub = members, hub
}

// UseClusterInformer has the controllers read Clusters from shared, the
// Cluster informer the rest of the process (the member hub, search) reads,
// so the server watches its own Clusters once. Its owner runs it, whether
// or not this replica leads: the factory's Start leaves it alone. Call it
// before Run, before anything asks KarmadaInformers for Clusters.
func (c *Context) UseClusterInformer(shared cache.SharedIndexInformer) {
	c.KarmadaInformers.InformerFor(&clusterv1alpha1.Cluster{}, func(versioned.Interface, time.Duration) cache.SharedIndexInformer {
		return runElsewhere{shared}
	})
}

// runElsewhere is an informer its owner runs: Run and RunWithContext
// return at once, so a factory's Start neither runs it under another
// context (a lease that ends) nor warns that it already runs.
type runElsewhere struct{ cache.SharedIndexInformer }

func (runElsewhere) Run(<-chan struct{})            {}
func (runElsewhere) RunWithContext(context.Context) {}

// Run starts the enabled controllers, under leader election when asked, and
// blocks until ctx ends.
func Run(ctx context.Context, c *Context) error {
	log := klog.FromContext(ctx)
	if c.Members == nil || c.Hub == nil {
		return errors.New("the controllers need the process's member clients and hub (UseMembers)")
	}
	var warmed map[reflect.Type]bool
	took := make(chan struct{})
	start := func(ctx context.Context) {
		began := time.Now()
		if warmed != nil {
			c.tookOver(took) // the detector chooses the template kinds now
		}
		// Nothing is interpreted before the customizations are known.
		c.KarmadaInformers.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), c.interpreterSynced...) {
			return
		}
		for _, name := range Names() {
			if !Enabled(name, c.Options.Controllers) {
				log.Info("Controller disabled", "controller", name)
				continue
			}
			if err := Controllers()[name](ctx, c); err != nil {
				log.Error(err, "Starting controller failed", "controller", name)
				continue
			}
			log.Info("Started controller", "controller", name)
		}
		c.KarmadaInformers.Start(ctx.Done())
		c.HostInformers.Start(ctx.Done())
		if warmed != nil {
			coldAtTakeover(ctx, c, warmed, time.Since(began))
		}
		<-ctx.Done()
	}
	if !c.Options.LeaderElect {
		start(ctx)
		return nil
	}
	// Waiting for the lease, the replica keeps the controllers' informers
	// synced: a takeover registers the handlers on full caches.
	warmed = warm(ctx, c, took)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Options.LeaseNamespace}}
	if _, err := c.Host.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the lease namespace: %w", err)
	}
	id, _ := os.Hostname()
	id = fmt.Sprintf("%s_%d", id, os.Getpid())
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, c.Options.LeaseNamespace, c.Options.LeaseName,
		c.Host.CoreV1(), c.Host.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true,
		LeaseDuration: c.Options.LeaseDuration, RenewDeadline: c.Options.RenewDeadline, RetryPeriod: c.Options.RetryPeriod,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: start,
			OnStoppedLeading: func() { log.Info("Lost the controllers' lease", "identity", id) },
		},
	})
	if ctx.Err() == nil {
		// The lease was lost, not handed back: what ran under it has
		// stopped and cannot start again in this process.
		return ErrLeaseLost
	}
	return nil
}

// ErrLeaseLost is Run's error when the replica stopped renewing its lease
// while it should run on (its renewals failed for the renew deadline):
// another replica may lead now. Like kube-controller-manager, the process
// then exits, to start again as a standby.
var ErrLeaseLost = errors.New("the controllers' lease was lost")
