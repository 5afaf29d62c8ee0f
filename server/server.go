// Package server assembles flotilla-apiserver (Options in cmd, then
// Config -> Complete -> New here, as kubernetes/sample-apiserver): the
// registry's API groups, search, the metrics adapter, clusters/proxy and
// the agents' tunnels, the member clients and hub every part shares, the
// embedded controllers, and what the server installs on its host
// (APIServices and their Service, the RBAC of agent registration, the
// deletion-protection admission policy, the MCS API's CRDs).
package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/apis/generated/informers/externalversions"
	clusterinformers "github.com/flotilla-io/flotilla/apis/generated/informers/externalversions/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/controllers/manager"
	"github.com/flotilla-io/flotilla/explainapi"
	"github.com/flotilla-io/flotilla/inprocess"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/metricsapi"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/proxy"
	"github.com/flotilla-io/flotilla/registry"
	appsregistry "github.com/flotilla-io/flotilla/registry/apps"
	autoscalingregistry "github.com/flotilla-io/flotilla/registry/autoscaling"
	clusterregistry "github.com/flotilla-io/flotilla/registry/cluster"
	configregistry "github.com/flotilla-io/flotilla/registry/config"
	networkingregistry "github.com/flotilla-io/flotilla/registry/networking"
	policyregistry "github.com/flotilla-io/flotilla/registry/policy"
	remedyregistry "github.com/flotilla-io/flotilla/registry/remedy"
	rolloutregistry "github.com/flotilla-io/flotilla/registry/rollout"
	searchregistry "github.com/flotilla-io/flotilla/registry/search"
	workregistry "github.com/flotilla-io/flotilla/registry/work"
	"github.com/flotilla-io/flotilla/search"
	"github.com/flotilla-io/flotilla/tunnel"
)

// Config is the configuration of flotilla-apiserver.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	Scheme        *runtime.Scheme
	Codecs        serializer.CodecFactory
	// Host reaches the host API server, where the clusters' Secrets are;
	// HostConfig is its configuration (clusters/*/proxy sends non-resource
	// paths there as the caller, impersonated with the server's
	// credentials). Without it the server serves its storage only: no
	// search, metrics, registration or controllers.
	Host       kubernetes.Interface
	HostConfig *rest.Config
	// Search configures search/ and proxying/proxy of search.karmada.io.
	Search search.Options
	// Metrics configures metrics.k8s.io and custom.metrics.k8s.io.
	Metrics metricsapi.Options
	// Controllers configure the embedded controllers.
	Controllers manager.Options
	// APIService says how the server registers itself with the host's
	// aggregator; Serving is its serving configuration (the certificate
	// the APIServices' CA bundle comes from).
	APIService APIServiceOptions
	Serving    *genericoptions.SecureServingOptionsWithLoopback
	// TunnelRelay lets every replica reach every Pull cluster.
	TunnelRelay TunnelRelayOptions
	// Etcd is the storage's etcd, which the replicas share: their
	// FederatedResourceQuota locks live there. Nil: quota-raising binding
	// writes are serialized within this process only.
	Etcd *storagebackend.Config
}

// CompletedConfig is a Config with its defaults filled in; only it can
// build a Server.
type CompletedConfig struct {
	*Config
	generic genericapiserver.CompletedConfig
}

// longRunning says which requests the server's request timeout does not
// cut: watches, as by default, and the connect subresources that stream as
// long as their client wants, like kube-apiserver's pods/proxy:
// clusters/proxy and proxying/proxy (watch, logs -f, exec, port-forward)
// and clusters/tunnel (open while the agent is connected).
var longRunning = genericfilters.BasicLongRunningRequestCheck(
	sets.NewString("watch", "proxy"),
	sets.NewString("proxy", tunnel.Subresource),
)

// Complete fills in defaults. It does no I/O.
func (c *Config) Complete() CompletedConfig {
	c.GenericConfig.LongRunningFunc = longRunning
	return CompletedConfig{Config: c, generic: c.GenericConfig.Complete()}
}

// Server is flotilla-apiserver, ready to run.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
	// GroupVersions are the API group versions the server serves.
	GroupVersions []schema.GroupVersion
	// MemberClients and MemberHub reach the members: one client and one
	// watch per kind per member for search, metrics, the proxy and the
	// controllers together.
	MemberClients *member.Cache
	MemberHub     *member.Hub
	// Storage is the server's storage in process: the embedded
	// controllers, the member hub and search read and write through it.
	Storage *inprocess.Storage
	// controllersDone is closed when the embedded controllers have
	// stopped (nil when they do not run).
	controllersDone chan struct{}
	// Tunnels holds the tunnels of the pull clusters' agents
	// (clusters/tunnel), through which clusters/proxy, search and the
	// metrics APIs reach Pull clusters.
	Tunnels *tunnel.Server
}

// New builds the server: every API group, the member clients and hub,
// the registration of its groups on the host, and the controllers, which
// start once it serves.
func (c CompletedConfig) New() (*Server, error) {
	g, err := c.generic.New("flotilla-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	s := &Server{GenericAPIServer: g}
	getSecret, err := c.secrets(g)
	if err != nil {
		return nil, err
	}
	// The HTTP server does not close the connections it handed over:
	// close the tunnels so their agents reconnect to another replica.
	s.Tunnels = tunnel.NewServer()
	if err := g.AddPreShutdownHook("close-agent-tunnels", func() error {
		s.Tunnels.Close()
		return nil
	}); err != nil {
		return nil, err
	}
	if err := c.installTunnelRelay(g, s.Tunnels); err != nil {
		return nil, err
	}
	s.MemberClients = member.NewCache(getSecret)
	s.MemberClients.Tunnel = s.Tunnels.DialContext
	s.Storage = inprocess.New(inprocess.Config{Admission: c.generic.AdmissionControl, Scheme: c.Scheme, Codecs: c.Codecs})
	overHTTP, err := loopbackClient(g)
	if err != nil {
		return nil, err
	}
	informers, loopback := inProcessInformers(g, s.Storage, overHTTP)
	clusters := informers.Cluster().V1alpha1().Clusters()
	if s.MemberHub, err = memberHub(g, s.MemberClients, clusters); err != nil {
		return nil, err
	}
	var searchSrv *search.Server
	if c.HostConfig != nil {
		cfg := &search.Config{Options: c.Search, Authorizer: c.generic.Authorization.Authorizer, HostConfig: c.HostConfig,
			MemberClients: s.MemberClients, Informers: informers, Client: loopback}
		if searchSrv, err = cfg.Complete().New(); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		// Members whose Pods, Nodes (or other kinds) a ResourceRegistry
		// caches are watched once, for search and every other reader.
		s.MemberHub.SetShared(searchSrv.SharedListerWatcher)
	}
	explain := explainapi.Config{Clusters: func() ([]*clusterv1alpha1.Cluster, error) { return clusters.Lister().List(labels.Everything()) }}
	if c.HostConfig != nil {
		explain.Estimate = s.MemberHub.MaxReplicas
	}
	var interp *interpretation
	var review *explainapi.ReviewConfig
	if c.HostConfig != nil {
		if interp, err = c.newInterpretation(g, informers); err != nil {
			return nil, err
		}
		rc, err := c.reviewConfig(explain, interp)
		if err != nil {
			return nil, err
		}
		review = &rc
	}
	groups, err := c.apiGroups(g, s.MemberClients, s.Tunnels, searchSrv, explain, review)
	if err != nil {
		return nil, err
	}
	for _, info := range groups {
		info.NegotiatedSerializer = registry.NegotiatedSerializer(c.Codecs)
		if err := g.InstallAPIGroup(info); err != nil {
			return nil, fmt.Errorf("installing %s: %w", info.PrioritizedVersions[0].Group, err)
		}
		if err := s.Storage.Install(info); err != nil {
			return nil, fmt.Errorf("installing %s in process: %w", info.PrioritizedVersions[0].Group, err)
		}
		s.GroupVersions = append(s.GroupVersions, info.PrioritizedVersions...)
	}
	if c.HostConfig == nil {
		return s, nil
	}
	if c.generic.SecureServing != nil && c.generic.SecureServing.ClientCA != nil {
		if err := g.AddReadyzChecks(clientCALoaded(c.generic.SecureServing.ClientCA, c.Host, time.Now)); err != nil {
			return nil, err
		}
	}
	if err := c.installMetrics(g, s.MemberHub); err != nil {
		return nil, err
	}
	s.GroupVersions = append(s.GroupVersions, metricsapi.GroupVersions...)
	if c.APIService.Register {
		reg, err := newAPIServiceRegistrar(c.HostConfig, c.APIService, c.Serving, s.GroupVersions)
		if err != nil {
			return nil, err
		}
		// Registration waits until this server answers, so the aggregator
		// finds it available at once.
		if err := g.AddPostStartHook("register-apiservices", func(hctx genericapiserver.PostStartHookContext) error {
			go reg.run(hctx, klog.FromContext(hctx))
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return s, s.startControllers(c.Controllers, c.HostConfig, overHTTP, clusters.Informer(), interp)
}

// secrets returns the reader of the clusters' credential Secrets: only
// the cluster namespace is watched on the host.
func (c CompletedConfig) secrets(g *genericapiserver.GenericAPIServer) (member.SecretGetter, error) {
	if c.Host == nil {
		return func(namespace, name string) (*corev1.Secret, error) {
			return nil, fmt.Errorf("secret %s/%s: the server has no host", namespace, name)
		}, nil
	}
	secrets := informers.NewSharedInformerFactoryWithOptions(c.Host, 0, informers.WithNamespace(names.SecretNamespace))
	lister := secrets.Core().V1().Secrets().Lister()
	if err := g.AddPostStartHook("start-secret-informer", func(hctx genericapiserver.PostStartHookContext) error {
		secrets.Start(hctx.Done())
		return nil
	}); err != nil {
		return nil, err
	}
	return member.OnlyClusterSecrets(func(namespace, name string) (*corev1.Secret, error) {
		if sec, err := lister.Secrets(namespace).Get(name); err == nil {
			return sec, nil
		}
		// Not seen yet (just created): ask the host.
		return c.Host.CoreV1().Secrets(namespace).Get(context.Background(), name, metav1.GetOptions{})
	}), nil
}

// loopbackClient is the server's HTTP client of itself: what code in the
// process does not do in process (discovery, server-side apply) goes
// there.
func loopbackClient(g *genericapiserver.GenericAPIServer) (*versioned.Clientset, error) {
	if g.LoopbackClientConfig == nil {
		return nil, errors.New("the server has no loopback client configuration")
	}
	// Every loopback client copies this configuration, so
	// flotilla_loopback_watches sees all their watches (none, when
	// everything watches in process).
	g.LoopbackClientConfig.Wrap(countLoopbackWatches)
	cfg := rest.CopyConfig(g.LoopbackClientConfig)
	cfg.QPS, cfg.Burst = 50, 100
	return versioned.NewForConfig(cfg)
}

// inProcessInformers returns the server's one informer factory over its
// storage in process, and the in-process client: the member hub, search
// and the embedded controllers read the Clusters of one informer (one
// watch, which runs whether or not this replica leads the controllers),
// search its ResourceRegistries too. Register every informer before the
// server starts: the factory starts once it serves.
func inProcessInformers(g *genericapiserver.GenericAPIServer, st *inprocess.Storage, overHTTP *versioned.Clientset) (externalversions.SharedInformerFactory, versioned.Interface) {
	factory := externalversions.NewSharedInformerFactory(st.Informers(overHTTP), 0)
	g.AddPostStartHookOrDie("start-loopback-informers", func(hctx genericapiserver.PostStartHookContext) error {
		factory.Start(hctx.Done())
		return nil
	})
	return factory, st.Client(overHTTP)
}

// memberHub builds the process's member hub; it runs once the server
// serves and the Clusters are listed.
func memberHub(g *genericapiserver.GenericAPIServer, clients *member.Cache, clusters clusterinformers.ClusterInformer) (*member.Hub, error) {
	hub := member.NewHub(func() ([]*clusterv1alpha1.Cluster, error) {
		return clusters.Lister().List(labels.Everything())
	}, clients.Get)
	if err := hub.TriggerOn(clusters.Informer()); err != nil {
		return nil, err
	}
	err := g.AddPostStartHook("start-member-hub", func(hctx genericapiserver.PostStartHookContext) error {
		go func() {
			if !cache.WaitForCacheSync(hctx.Done(), clusters.Informer().HasSynced) {
				return
			}
			// The hook's context ends when the server stops.
			hub.Run(klog.NewContext(hctx.Context, klog.Background().WithName("member-hub")))
		}()
		return nil
	})
	return hub, err
}

// apiGroups builds every API group the registry stores, with search's
// endpoints in search.karmada.io when search runs, the bindings' explain
// subresources and, when review is set, dry-run placement
// (placementreviews in flotilla.io).
func (c CompletedConfig) apiGroups(g *genericapiserver.GenericAPIServer, members *member.Cache, tunnels *tunnel.Server, searchSrv *search.Server,
	explain explainapi.Config, review *explainapi.ReviewConfig) ([]*genericapiserver.APIGroupInfo, error) {
	opts := c.generic.RESTOptionsGetter
	var hostProxy []proxy.Option
	if c.HostConfig != nil {
		opt, err := proxy.WithHost(c.HostConfig)
		if err != nil {
			return nil, fmt.Errorf("clusters/*/proxy: %w", err)
		}
		hostProxy = append(hostProxy, opt)
	}
	var groups []*genericapiserver.APIGroupInfo
	add := func(info *genericapiserver.APIGroupInfo, err error) error {
		groups = append(groups, info)
		return err
	}
	// ResourceBinding writes are checked against the FederatedResourceQuotas.
	policyGroup, err := policyregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts, policyregistry.WithNoExecuteTaints(c.Controllers.EnableNoExecuteTaintEviction))
	if err != nil {
		return nil, err
	}
	quotas, err := workregistry.NewQuotaLister(policyGroup.VersionedResourcesStorageMap["v1alpha1"]["federatedresourcequotas"])
	if err != nil {
		return nil, err
	}
	var shared workregistry.NamespaceLock
	if c.Etcd != nil && len(c.Etcd.Transport.ServerList) > 0 {
		locks, err := newQuotaLocks(*c.Etcd)
		if err != nil {
			return nil, err
		}
		shared = locks.Lock
		if err := g.AddPostStartHook("quota-locks", func(hctx genericapiserver.PostStartHookContext) error {
			go func() {
				<-hctx.Done()
				locks.Close()
			}()
			return nil
		}); err != nil {
			return nil, err
		}
	}
	workGroup, err := withExplain(workregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts, quotas, shared))(explain)
	if err != nil {
		return nil, err
	}
	rolloutGroup, err := rolloutregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts)
	if err != nil {
		return nil, err
	}
	if review != nil {
		st, err := reviewStorage(*review, policyGroup.VersionedResourcesStorageMap["v1alpha1"], workGroup.VersionedResourcesStorageMap["v1alpha2"])
		if err != nil {
			return nil, err
		}
		rolloutGroup.VersionedResourcesStorageMap["v1alpha1"]["placementreviews"] = st
	}
	err = errors.Join(
		add(clusterregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts, members, tunnels, hostProxy...)),
		add(policyGroup, nil),
		add(workGroup, nil),
		add(configregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts)),
		add(autoscalingregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts)),
		add(c.searchGroup(g, searchSrv)),
		add(networkingregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts)),
		add(appsregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts)),
		add(remedyregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, opts)),
		add(rolloutGroup, nil),
	)
	return groups, err
}

// withExplain adds the bindings' explain subresource (explainapi) to the
// work.karmada.io group, in each version that serves bindings.
func withExplain(info *genericapiserver.APIGroupInfo, err error) func(explainapi.Config) (*genericapiserver.APIGroupInfo, error) {
	return func(cfg explainapi.Config) (*genericapiserver.APIGroupInfo, error) {
		if err != nil {
			return info, err
		}
		for _, storages := range info.VersionedResourcesStorageMap {
			more, err := cfg.Storages(storages)
			if err != nil {
				return info, err
			}
			for name, st := range more {
				storages[name] = st
			}
		}
		return info, nil
	}
}

// searchGroup is search.karmada.io: resourceregistries, and the search
// and proxying endpoints over the member caches they drive.
func (c CompletedConfig) searchGroup(g *genericapiserver.GenericAPIServer, srv *search.Server) (*genericapiserver.APIGroupInfo, error) {
	info, err := searchregistry.NewAPIGroupInfo(c.Scheme, c.Codecs, c.generic.RESTOptionsGetter)
	if err != nil || srv == nil {
		return info, err
	}
	for name, st := range srv.Storage {
		info.VersionedResourcesStorageMap["v1alpha1"][name] = st
	}
	if err := g.AddPostStartHook("start-search-cache", srv.PostStartHook); err != nil {
		return nil, err
	}
	return info, nil
}

// installMetrics serves metrics.k8s.io and custom.metrics.k8s.io from the
// members' metrics.
func (c CompletedConfig) installMetrics(g *genericapiserver.GenericAPIServer, hub *member.Hub) error {
	cfg := &metricsapi.Config{Options: c.Metrics, Scheme: c.Scheme, Codecs: c.Codecs, HostConfig: c.HostConfig, Members: hub,
		Authorizer: c.generic.Authorization.Authorizer}
	m, err := cfg.Complete().New()
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return m.Install(g)
}

// startControllers runs the embedded controllers once the server serves,
// on its storage in process, the process's member clients and hub and its
// Cluster informer.
func (s *Server) startControllers(opts manager.Options, host *rest.Config, overHTTP *versioned.Clientset, clusters cache.SharedIndexInformer,
	interp *interpretation) error {
	g := s.GenericAPIServer
	s.controllersDone = make(chan struct{})
	return g.AddPostStartHook("start-controllers", func(hctx genericapiserver.PostStartHookContext) error {
		mc, err := manager.NewContext(opts, manager.KarmadaClients{
			Client: s.Storage.Client(overHTTP), Informers: s.Storage.Informers(overHTTP), Shared: true,
			Interpreter: interp.interpreter, Customizations: interp.customizations, InterpreterSynced: interp.synced,
		}, host)
		if err != nil {
			return err
		}
		mc.UseMembers(s.MemberClients, s.MemberHub)
		mc.UseClusterInformer(clusters)
		go func() {
			defer close(s.controllersDone)
			err := manager.Run(hctx, mc)
			if errors.Is(err, manager.ErrLeaseLost) {
				klog.FromContext(hctx).Error(err, "Exiting, to start again as a standby")
				klog.FlushAndExit(klog.ExitFlushTimeout, 1)
			}
			if err != nil {
				klog.FromContext(hctx).Error(err, "Controllers stopped")
			}
		}()
		return nil
	})
}

// controllersStopGrace bounds how long Run waits, once the server has
// stopped, for the controllers to stop and hand their lease back.
const controllersStopGrace = 10 * time.Second

// Run serves until ctx ends. Then it waits (at most controllersStopGrace)
// for the embedded controllers to stop, so that a leader stopped by
// SIGTERM releases its lease and another replica (or the restarted
// process) takes over at once instead of after the lease expires.
func (s *Server) Run(ctx context.Context) error {
	err := s.GenericAPIServer.PrepareRun().RunWithContext(ctx)
	if s.controllersDone != nil {
		select {
		case <-s.controllersDone:
		case <-time.After(controllersStopGrace):
			klog.FromContext(ctx).Info("The controllers did not stop in time; exiting without them", "grace", controllersStopGrace)
		}
	}
	return err
}
