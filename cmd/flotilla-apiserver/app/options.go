// Package app holds flotilla-apiserver's options, configuration and run loop.
package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cliflag "k8s.io/component-base/cli/flag"

	generatedopenapi "github.com/flotilla-io/flotilla/apis/generated/openapi"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/server"
	"github.com/flotilla-io/flotilla/telemetry"
)

// etcdPathPrefix is where flotilla-apiserver keeps its objects in etcd.
const etcdPathPrefix = "/registry/flotilla"

// Options holds the flags of flotilla-apiserver. Zero values are never valid; use NewOptions.
type Options struct {
	Server *genericoptions.RecommendedOptions
	// EmbeddedEtcdDir runs etcd inside the process with its data there, when
	// no --etcd-servers are given.
	EmbeddedEtcdDir string
	// EmbeddedEtcdUnsafeNoFsync skips fsync in the embedded etcd: for test
	// beds whose other etcd does the same, never for data that matters.
	EmbeddedEtcdUnsafeNoFsync bool
	// GCPercent is the garbage collector's target (GOGC) when the GOGC
	// environment variable is not set. Go's default, 100: the process's
	// peak memory is twice what its informers keep live (200, the default
	// before, spent a few percent less CPU for 1.5 times the memory).
	// A GOMEMLIMIT (the chart sets one from the container's limit) makes
	// the collector work harder only near that limit.
	GCPercent int
	// ShutdownWatchTerminationGracePeriod is how long, after SIGTERM, the
	// server waits for the watches it serves to end (each is told to end
	// at once; clients then watch another replica). Without it, the HTTP
	// server waits for them up to the request timeout (a minute) and the
	// process, its embedded etcd included, stays that long.
	ShutdownWatchTerminationGracePeriod time.Duration
	// ShutdownDelayDuration is how long, after SIGTERM, the server keeps
	// serving with /readyz failing before it stops listening (Kubernetes'
	// --shutdown-delay-duration): the time the host's aggregator takes to
	// stop sending it requests once its endpoint is withdrawn, so a replica
	// stopping fails none. The controllers stop, and hand their lease
	// back, at the signal.
	ShutdownDelayDuration time.Duration
	// Options configure what the server assembles: its APIServices, the
	// controllers, search, the metrics APIs and the tunnel relay.
	server.Options
	// MetricsBindAddress is where the process's own Prometheus metrics
	// are served over plain HTTP (Karmada's --metrics-bind-address);
	// empty or "0": not served there (the secure port's /metrics stays).
	MetricsBindAddress string

	// searchIndexInMemory keeps the index in memory even with a data directory.
	searchIndexInMemory bool

	storage server.Storage
}

// NewOptions returns the default options.
func NewOptions() *Options {
	storage := server.NewStorage()
	o := &Options{
		storage:   storage,
		Server:    storage.RecommendedOptions(etcdPathPrefix),
		Options:   server.NewOptions(),
		GCPercent: 100,

		ShutdownWatchTerminationGracePeriod: 5 * time.Second,

		MetricsBindAddress: telemetry.DefaultBindAddress,
	}
	o.APIService = server.APIServiceOptions{Register: true, ServiceName: names.ServerService, ServiceNamespace: names.SystemNamespace}
	o.Server.Etcd.StorageConfig.Transport.ServerList = nil
	o.Server.SecureServing.ServerCert.CertDirectory = ""
	return o
}

// AddFlags adds the flags, one named section per concern.
func (o *Options) AddFlags(fss *cliflag.NamedFlagSets) {
	o.Server.AddFlags(fss.FlagSet("generic"))
	fs := fss.FlagSet("flotilla")
	fs.StringVar(&o.EmbeddedEtcdDir, "embedded-etcd-dir", o.EmbeddedEtcdDir, "run etcd inside the process with its data in this directory (used when --etcd-servers is empty)")
	fs.BoolVar(&o.EmbeddedEtcdUnsafeNoFsync, "embedded-etcd-unsafe-no-fsync", o.EmbeddedEtcdUnsafeNoFsync, "UNSAFE: skip fsync in the embedded etcd (a machine crash loses the last writes); for test beds only")
	fs.DurationVar(&o.ShutdownWatchTerminationGracePeriod, "shutdown-watch-termination-grace-period", o.ShutdownWatchTerminationGracePeriod,
		"how long, after SIGTERM, to wait for the watches served to end (each is ended at once, so clients resume on another replica); 0: let them run until the request timeout")
	fs.IntVar(&o.GCPercent, "gc-percent", o.GCPercent, "garbage collector target percentage when GOGC is not set (higher: less CPU, more memory)")
	fs.DurationVar(&o.ShutdownDelayDuration, "shutdown-delay-duration", o.ShutdownDelayDuration,
		"how long, after SIGTERM, to keep serving with /readyz failing before the listener closes, so that requests routed here while the endpoint is withdrawn still succeed (several replicas: a few seconds)")
	fs.BoolVar(&o.APIService.Register, "register-apiservices", o.APIService.Register, "create or update this server's APIService objects on the host at start, and install the CRDs of the MCS API (multicluster.x-k8s.io ServiceExport and ServiceImport) unless someone else installed them")
	fs.StringVar(&o.APIService.ServiceName, "service-name", o.APIService.ServiceName, "name of the Service the APIServices point at")
	fs.StringVar(&o.APIService.ServiceNamespace, "service-namespace", o.APIService.ServiceNamespace, "namespace of that Service")
	fs.StringVar(&o.TunnelRelay.Address, "tunnel-relay-address", o.TunnelRelay.Address, "host:port where the other replicas reach this one: with several replicas, a request for a Pull cluster whose agent is connected to another replica is relayed through it. An IP alone takes --secure-port. Empty: --bind-address and --secure-port when the bind address is one address; \""+relayOff+"\": no relay. Every replica must share the serving certificate's CA")
	fs.StringVar(&o.APIService.ExternalName, "service-external-name", o.APIService.ExternalName, "make that Service an ExternalName Service for this host (for a server running outside the host cluster, e.g. localhost)")
	o.Search.AddFlags(fss.FlagSet("search"))
	o.Metrics.AddFlags(fss.FlagSet("metrics"))
	fss.FlagSet("metrics").StringVar(&o.MetricsBindAddress, telemetry.BindAddressFlag, o.MetricsBindAddress,
		"address (host:port) serving this process's Prometheus metrics at "+telemetry.Path+" over plain HTTP; empty or 0 disables it")
	fss.FlagSet("search").BoolVar(&o.searchIndexInMemory, "search-index-in-memory", o.searchIndexInMemory, "keep the full-text index in memory instead of under the data directory (beside --embedded-etcd-dir)")
	cs := fss.FlagSet("controllers")
	cs.StringSliceVar(&o.Controllers.Controllers, "controllers", o.Controllers.Controllers, "controllers to run: '*' for all those on by default, 'name' to enable one, '-name' to disable one; known: "+strings.Join(server.ControllerNames(), ", ")+"; off by default: "+strings.Join(server.ControllersOffByDefault(), ", "))
	cs.BoolVar(&o.Controllers.LeaderElect, "leader-elect", o.Controllers.LeaderElect, "run the controllers only in the replica holding the lease "+o.Controllers.LeaseNamespace+"/"+o.Controllers.LeaseName+" on the host")
	cs.DurationVar(&o.Controllers.LeaseDuration, "leader-elect-lease-duration", o.Controllers.LeaseDuration, "how long a standby replica waits after the leader's last observed renewal before taking the controllers' lease")
	cs.DurationVar(&o.Controllers.RenewDeadline, "leader-elect-renew-deadline", o.Controllers.RenewDeadline, "how long the leader keeps trying to renew before it stops its controllers; less than the lease duration")
	cs.DurationVar(&o.Controllers.RetryPeriod, "leader-elect-retry-period", o.Controllers.RetryPeriod, "how often replicas try to acquire or renew the lease")
	cs.StringVar(&o.Controllers.LeaseNamespace, "leader-elect-resource-namespace", o.Controllers.LeaseNamespace, "namespace of the controllers' Lease on the host")
	cs.StringVar(&o.Controllers.LeaseName, "leader-elect-resource-name", o.Controllers.LeaseName, "name of the controllers' Lease on the host")
	cs.DurationVar(&o.Controllers.ClusterStatusUpdateFrequency, "cluster-status-update-frequency", o.Controllers.ClusterStatusUpdateFrequency, "how often the status of each push cluster is probed")
	cs.BoolVar(&o.Controllers.MultiplePodTemplatesScheduling, "multiple-pod-templates-scheduling", o.Controllers.MultiplePodTemplatesScheduling,
		"schedule workloads made of several pod templates as a whole, from the interpreter's components (Karmada's alpha feature gate MultiplePodTemplatesScheduling)")
	cs.BoolVar(&o.Controllers.EnableNoExecuteTaintEviction, "enable-no-execute-taint-eviction", o.Controllers.EnableNoExecuteTaintEviction,
		"run the taint manager: bindings leave clusters whose NoExecute taints their placement does not tolerate (after tolerationSeconds), and ClusterTaintPolicies may add NoExecute taints")
	cs.Var(purgeModeFlag{&o.Controllers.Taints.PurgeMode}, "no-execute-taint-eviction-purge-mode",
		"how a binding leaves a NoExecute-tainted cluster when its policy's failover.cluster.purgeMode does not say: Gracefully (keep the old workload until the new one is healthy or --graceful-eviction-timeout) or Directly")
	cs.Float64Var(&o.Controllers.Taints.UnhealthyClusterThreshold, "unhealthy-cluster-threshold", o.Controllers.Taints.UnhealthyClusterThreshold,
		"share (0-1) of clusters not Ready above which the taint manager pauses evictions, taking it for a partition of the control plane")
	cs.DurationVar(&o.Controllers.Taints.UnhealthyClusterWindow, "unhealthy-cluster-window", o.Controllers.Taints.UnhealthyClusterWindow,
		"how long a cluster must have been not Ready before the taint manager evicts from it, so that the other clusters of a partition show as not Ready first and --unhealthy-cluster-threshold pauses the evictions")
	cs.Float64Var(&o.Controllers.Taints.EvictionRate, "resource-eviction-rate", o.Controllers.Taints.EvictionRate,
		"bindings the taint manager may evict per second (a burst of as many)")
	cs.DurationVar(&o.Controllers.GracefulEvictionTimeout, "graceful-eviction-timeout", o.Controllers.GracefulEvictionTimeout,
		"how long an evicted workload stays in its old cluster, at most, waiting to be healthy in its new ones (tasks may set their own gracePeriodSeconds)")
	cs.BoolVar(&o.Controllers.ResourceQuotaEstimate, "resource-quota-estimate", o.Controllers.ResourceQuotaEstimate,
		"write the replicas' namespace and priority class into replica requirements, so ResourceQuotas of members are estimated by their scope (Karmada's alpha feature gate ResourceQuotaEstimate)")
	cs.DurationVar(&o.Controllers.AssumptionTTL, "assumption-ttl", o.Controllers.AssumptionTTL,
		"how long, at most, the scheduler counts the replicas it assigned a member as taken there until the member shows them, so a burst of workloads stops fitting a member before their pods appear (Karmada's scheduling overcommit protection); 0 estimates from the members' pods only")
	cs.StringVar(&o.Controllers.ClusterProfileNamespace, "cluster-profile-namespace", o.Controllers.ClusterProfileNamespace,
		"the host namespace where a ClusterProfile (multicluster.x-k8s.io, the Cluster Inventory API) of every cluster is published")
	cs.StringVar(&o.Controllers.ClusterProfileServer, "cluster-profile-server", o.Controllers.ClusterProfileServer,
		"the control plane's URL the ClusterProfiles' access provider points at (its clusters/{name}/proxy); empty: the host's URL as the server reaches it")
	cs.DurationVar(&o.Controllers.ClusterMonitorGracePeriod, "cluster-monitor-grace-period", o.Controllers.ClusterMonitorGracePeriod, "how long a cluster's heartbeat Lease may go unrenewed before its Ready condition becomes Unknown and it is tainted unreachable")
	cs.StringSliceVar(&o.Controllers.SkippedPropagatingNamespaces, "skipped-propagating-namespaces", o.Controllers.SkippedPropagatingNamespaces, "regular expressions of namespaces never propagated to members automatically")
	cs.DurationVar(&o.Controllers.HPA.SyncPeriod, "horizontal-pod-autoscaler-sync-period", o.Controllers.HPA.SyncPeriod, "how often each FederatedHPA is computed")
	cs.Float64Var(&o.Controllers.HPA.Algorithm.Tolerance, "horizontal-pod-autoscaler-tolerance", o.Controllers.HPA.Algorithm.Tolerance, "minimum relative change of the metric-to-target ratio that rescales")
	cs.DurationVar(&o.Controllers.HPA.Algorithm.DownscaleStabilizationWindow, "horizontal-pod-autoscaler-downscale-stabilization", o.Controllers.HPA.Algorithm.DownscaleStabilizationWindow, "scale-down stabilization window of FederatedHPAs without a behavior")
	cs.DurationVar(&o.Controllers.HPA.Algorithm.CPUInitializationPeriod, "horizontal-pod-autoscaler-cpu-initialization-period", o.Controllers.HPA.Algorithm.CPUInitializationPeriod, "period after pod start when CPU samples may be skipped")
	cs.DurationVar(&o.Controllers.HPA.Algorithm.DelayOfInitialReadinessStatus, "horizontal-pod-autoscaler-initial-readiness-delay", o.Controllers.HPA.Algorithm.DelayOfInitialReadinessStatus, "period after pod start during which readiness changes count as the initial readiness")
	cs.DurationVar(&o.Controllers.ClusterFailureThreshold, "cluster-failure-threshold", o.Controllers.ClusterFailureThreshold, "how long a cluster must fail its health probe before it is reported not ready")
	cs.IntVar(&o.Controllers.MaxClustersPerToken, "max-clusters-per-token", o.Controllers.MaxClustersPerToken, "how many Pull clusters one bootstrap token may register unless it is bound to one cluster name (flotillactl token create --cluster-name); 0 means no limit")
	cs.DurationVar(&o.Controllers.Descheduler.DeschedulingInterval, "descheduling-interval", o.Controllers.Descheduler.DeschedulingInterval,
		"how often the descheduler (--controllers=*,descheduler) looks for replicas their members cannot schedule")
	cs.DurationVar(&o.Controllers.Descheduler.UnschedulableThreshold, "unschedulable-threshold", o.Controllers.Descheduler.UnschedulableThreshold,
		"how long a pod must have been unschedulable in its member before the descheduler takes its replica off that member")
	cs.DurationVar(&o.Controllers.ClusterCacheSyncTimeout, "cluster-cache-sync-timeout", o.Controllers.ClusterCacheSyncTimeout, "how long to wait for a member's node and pod caches to list; a cluster's status, Ready included, is written only once they have")
	fs.StringVar(&o.APIService.CABundleFile, "apiservice-ca-file", o.APIService.CABundleFile, "CA the aggregator verifies this server with (default: the last certificate of the serving certificate file)")
}

// Complete derives values from the flags. It does no I/O beyond creating
// the self-signed serving certificate when none is given.
func (o *Options) Complete() error {
	// --kubeconfig (the core API kubeconfig) reaches the host API server, the
	// aggregator; it is also the default for delegated authn and authz.
	if host := o.HostKubeconfig(); host != "" {
		if o.Server.Authentication.RemoteKubeConfigFile == "" {
			o.Server.Authentication.RemoteKubeConfigFile = host
		}
		if o.Server.Authorization.RemoteKubeConfigFile == "" {
			o.Server.Authorization.RemoteKubeConfigFile = host
		}
	}
	if o.Server.SecureServing.ServerCert.CertDirectory == "" && o.EmbeddedEtcdDir != "" {
		o.Server.SecureServing.ServerCert.CertDirectory = filepath.Join(filepath.Dir(filepath.Clean(o.EmbeddedEtcdDir)), "certs")
	}
	// The aggregator verifies <service>.<namespace>.svc.
	if o.Search.Index && o.Search.IndexDir == "" && o.EmbeddedEtcdDir != "" && !o.searchIndexInMemory {
		o.Search.IndexDir = server.DefaultSearchIndexDir(filepath.Dir(filepath.Clean(o.EmbeddedEtcdDir)))
	}
	o.completeRelay()
	svcDNS := o.APIService.ServiceName + "." + o.APIService.ServiceNamespace + ".svc"
	return o.Server.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", []string{svcDNS, "localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
}

// HostKubeconfig is the kubeconfig of the host API server (--kubeconfig).
func (o *Options) HostKubeconfig() string { return o.Server.CoreAPI.CoreAPIKubeconfigPath }

// Validate checks the options.
func (o *Options) Validate() error {
	generic := *o.Server
	if o.embeddedEtcd() {
		// The embedded etcd's address is known only once it runs.
		generic.Etcd = nil
	}
	errs := generic.Validate()
	if len(o.Server.Etcd.StorageConfig.Transport.ServerList) == 0 && o.EmbeddedEtcdDir == "" {
		errs = append(errs, errors.New("either --etcd-servers or --embedded-etcd-dir is required"))
	}
	if err := server.ValidateControllers(o.Controllers.Controllers); err != nil {
		errs = append(errs, err)
	}
	if t := o.Controllers.Taints.UnhealthyClusterThreshold; t <= 0 || t > 1 {
		errs = append(errs, fmt.Errorf("--unhealthy-cluster-threshold must be above 0 and at most 1, got %v", t))
	}
	if o.Controllers.Taints.EvictionRate <= 0 {
		errs = append(errs, fmt.Errorf("--resource-eviction-rate must be positive, got %v", o.Controllers.Taints.EvictionRate))
	}
	if o.Controllers.GracefulEvictionTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--graceful-eviction-timeout must be positive, got %v", o.Controllers.GracefulEvictionTimeout))
	}
	if c := o.Controllers; c.LeaderElect && (c.RetryPeriod <= 0 || c.RenewDeadline <= c.RetryPeriod || c.LeaseDuration <= c.RenewDeadline) {
		errs = append(errs, fmt.Errorf("leader election needs 0 < --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)", c.RetryPeriod, c.RenewDeadline, c.LeaseDuration))
	}
	if d := o.Controllers.Descheduler; d.DeschedulingInterval <= 0 || d.UnschedulableThreshold < 0 {
		errs = append(errs, fmt.Errorf("--descheduling-interval must be positive (got %s) and --unschedulable-threshold not negative (got %s)", d.DeschedulingInterval, d.UnschedulableThreshold))
	}
	if o.ShutdownWatchTerminationGracePeriod < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-watch-termination-grace-period must not be negative, got %s", o.ShutdownWatchTerminationGracePeriod))
	}
	if o.ShutdownDelayDuration < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay-duration must not be negative, got %s", o.ShutdownDelayDuration))
	}
	if o.Controllers.MaxClustersPerToken < 0 {
		errs = append(errs, fmt.Errorf("--max-clusters-per-token must not be negative, got %d", o.Controllers.MaxClustersPerToken))
	}
	if a := o.TunnelRelay.Address; a != "" && a != relayOff {
		if host, port, err := net.SplitHostPort(a); err != nil || host == "" || port == "" {
			errs = append(errs, fmt.Errorf("--tunnel-relay-address must be host:port, got %q", a))
		}
	}
	if o.APIService.Register && o.HostKubeconfig() == "" && !inCluster() {
		errs = append(errs, errors.New("--register-apiservices needs --kubeconfig, or a pod's ServiceAccount (in-cluster configuration)"))
	}
	return utilerrors.NewAggregate(errs)
}

// relayOff is the --tunnel-relay-address that turns the relay off.
const relayOff = "none"

// completeRelay derives the relay address from the bind address when it
// is one address (not 0.0.0.0 or ::), and turns "none" into no relay.
func (o *Options) completeRelay() {
	switch a := o.TunnelRelay.Address; {
	case a == relayOff:
		o.TunnelRelay.Address = ""
	case net.ParseIP(a) != nil && o.Server.SecureServing.BindPort > 0:
		// An IP alone (a pod's, IPv6 included): the secure port's.
		o.TunnelRelay.Address = net.JoinHostPort(a, strconv.Itoa(o.Server.SecureServing.BindPort))
	case a == "":
		ip, port := o.Server.SecureServing.BindAddress, o.Server.SecureServing.BindPort
		if ip != nil && !ip.IsUnspecified() && port > 0 {
			o.TunnelRelay.Address = net.JoinHostPort(ip.String(), strconv.Itoa(port))
		}
	}
}

// inCluster says whether the process runs in a pod, where client-go's
// in-cluster configuration reaches the host without --kubeconfig.
func inCluster() bool { return os.Getenv("KUBERNETES_SERVICE_HOST") != "" }

func (o *Options) embeddedEtcd() bool {
	return len(o.Server.Etcd.StorageConfig.Transport.ServerList) == 0 && o.EmbeddedEtcdDir != ""
}

// Config builds the server configuration: the only place flags meet config.
// embedded is the embedded etcd when it runs (the registry's storage then
// calls it in process; its URL serves the other clients); host reaches the
// host API server.
func (o *Options) Config(embedded *server.EmbeddedEtcd, host *rest.Config) (*server.Config, error) {
	if embedded != nil {
		o.Server.Etcd.StorageConfig.Transport.ServerList = []string{embedded.ClientURL}
	}
	cfg := genericapiserver.NewRecommendedConfig(o.storage.Codecs)
	cfg.Serializer = o.storage.NegotiatedSerializer()
	namer := openapi.NewDefinitionNamer(o.storage.Scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title, cfg.OpenAPIConfig.Info.Version = "Flotilla", "v1alpha1"
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title, cfg.OpenAPIV3Config.Info.Version = "Flotilla", "v1alpha1"
	cfg.FeatureGate = utilfeature.DefaultFeatureGate
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	if err := o.Server.ApplyTo(cfg); err != nil {
		return nil, fmt.Errorf("applying options: %w", err)
	}
	if embedded != nil {
		getter, err := embedded.Storage(cfg.RESTOptionsGetter, o.Server.Etcd)
		if err != nil {
			return nil, err
		}
		cfg.RESTOptionsGetter = getter
	}
	cfg.ShutdownWatchTerminationGracePeriod = o.ShutdownWatchTerminationGracePeriod
	cfg.ShutdownDelayDuration = o.ShutdownDelayDuration
	hostClient, err := kubernetes.NewForConfig(host)
	if err != nil {
		return nil, err
	}
	return &server.Config{GenericConfig: cfg, Scheme: o.storage.Scheme, Codecs: o.storage.Codecs, Host: hostClient, HostConfig: host, Search: o.Search, Metrics: o.Metrics,
		Controllers: o.Controllers, APIService: o.APIService, Serving: o.Server.SecureServing, TunnelRelay: o.TunnelRelay,
		Etcd: &o.Server.Etcd.StorageConfig}, nil
}

// NewCommand returns the flotilla-apiserver command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:          "flotilla-apiserver",
		Short:        "Serve the karmada.io APIs of Flotilla behind the host's aggregator",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			// SIGTERM or SIGINT stops the server gracefully: requests
			// drain, and the controllers hand their lease back so another
			// replica takes over at once (a second signal exits).
			return Run(genericapiserver.SetupSignalContext(), o)
		},
	}
	fss := cliflag.NamedFlagSets{}
	o.AddFlags(&fss)
	for _, fs := range fss.FlagSets {
		cmd.Flags().AddFlagSet(fs)
	}
	return cmd
}

// purgeModeFlag is --no-execute-taint-eviction-purge-mode: the purge modes
// of a cluster failover (and their older names).
type purgeModeFlag struct{ mode *policyv1alpha1.PurgeMode }

func (f purgeModeFlag) String() string {
	if f.mode == nil {
		return ""
	}
	return string(*f.mode)
}

func (f purgeModeFlag) Set(v string) error {
	switch m := policyv1alpha1.PurgeMode(v); m {
	case policyv1alpha1.PurgeModeGracefully, policyv1alpha1.PurgeModeDirectly, policyv1alpha1.PurgeModeGraciously, policyv1alpha1.PurgeModeImmediately:
		*f.mode = m
		return nil
	}
	return fmt.Errorf("%q is not a purge mode: Gracefully or Directly", v)
}

func (f purgeModeFlag) Type() string { return "string" }
