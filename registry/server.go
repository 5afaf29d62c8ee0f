package registry

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	metricsinstall "k8s.io/metrics/pkg/apis/metrics/install"

	appsinstall "github.com/flotilla-io/flotilla/apis/apps/install"
	autoscalinginstall "github.com/flotilla-io/flotilla/apis/autoscaling/install"
	clusterinstall "github.com/flotilla-io/flotilla/apis/cluster/install"
	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	configinstall "github.com/flotilla-io/flotilla/apis/config/install"
	networkinginstall "github.com/flotilla-io/flotilla/apis/networking/install"
	policyinstall "github.com/flotilla-io/flotilla/apis/policy/install"
	remedyinstall "github.com/flotilla-io/flotilla/apis/remedy/install"
	searchinstall "github.com/flotilla-io/flotilla/apis/search/install"
	workinstall "github.com/flotilla-io/flotilla/apis/work/install"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/metricsadapter"
	"github.com/flotilla-io/flotilla/proxy"
	appsregistry "github.com/flotilla-io/flotilla/registry/apps"
	autoscalingregistry "github.com/flotilla-io/flotilla/registry/autoscaling"
	clusterregistry "github.com/flotilla-io/flotilla/registry/cluster"
	configregistry "github.com/flotilla-io/flotilla/registry/config"
	networkingregistry "github.com/flotilla-io/flotilla/registry/networking"
	policyregistry "github.com/flotilla-io/flotilla/registry/policy"
	remedyregistry "github.com/flotilla-io/flotilla/registry/remedy"
	searchregistry "github.com/flotilla-io/flotilla/registry/search"
	workregistry "github.com/flotilla-io/flotilla/registry/work"
	"github.com/flotilla-io/flotilla/search"
	"github.com/flotilla-io/flotilla/tunnel"
)

// StorageVersions are the versions objects are stored in, one per group.
var StorageVersions = schema.GroupVersions{
	{Group: "cluster.karmada.io", Version: "v1alpha1"},
	{Group: "policy.karmada.io", Version: "v1alpha1"},
	{Group: "work.karmada.io", Version: "v1alpha2"},
	{Group: "work.karmada.io", Version: "v1alpha1"},
	{Group: "config.karmada.io", Version: "v1alpha1"},
	{Group: "autoscaling.karmada.io", Version: "v1alpha1"},
	{Group: "search.karmada.io", Version: "v1alpha1"},
	{Group: "networking.karmada.io", Version: "v1alpha1"},
	{Group: "apps.karmada.io", Version: "v1alpha1"},
	{Group: "remedy.karmada.io", Version: "v1alpha1"},
}

// NewScheme returns a scheme holding every API flotilla-apiserver serves.
func NewScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, install := range []func(*runtime.Scheme){
		clusterinstall.Install, policyinstall.Install, workinstall.Install, configinstall.Install,
		autoscalinginstall.Install, searchinstall.Install, networkinginstall.Install, appsinstall.Install, remedyinstall.Install,
		metricsinstall.Install,
	} {
		install(scheme)
	}
	// Options and status objects every API server speaks, unversioned.
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Group: "", Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	return scheme
}

// Config is the configuration of flotilla-apiserver's API surface.
type Config struct {
	GenericConfig *genericapiserver.RecommendedConfig
	Scheme        *runtime.Scheme
	Codecs        serializer.CodecFactory
	// Host reaches the host API server, where the clusters' Secrets are;
	// HostConfig is its configuration (clusters/*/proxy sends non-resource
	// paths there as the caller, impersonated with the server's credentials).
	Host       kubernetes.Interface
	HostConfig *rest.Config
	// Search configures search/ and proxying/proxy of search.karmada.io.
	Search search.Options
	// Metrics configures metrics.k8s.io and custom.metrics.k8s.io.
	Metrics metricsadapter.Options
}

// SecretNamespace is where join puts the clusters' credential Secrets, the
// only namespace whose Secrets the server reads.
const SecretNamespace = clusterv1alpha1.SecretNamespace

// CompletedConfig is a Config with its defaults filled in; only it can build a Server.
type CompletedConfig struct {
	host    kubernetes.Interface
	hostCfg *rest.Config
	generic genericapiserver.CompletedConfig
	scheme  *runtime.Scheme
	codecs  serializer.CodecFactory
	search  search.Options
	metrics metricsadapter.Options
}

// Server is the running API surface of flotilla-apiserver.
type Server struct {
	GenericAPIServer *genericapiserver.GenericAPIServer
	// GroupVersions are the API group versions the server serves.
	GroupVersions []schema.GroupVersion
	// Metrics is the metrics APIs' server, whose member informers the
	// controllers of the same process share; nil without a host.
	Metrics *metricsadapter.Server
	// MemberClients are the process's member clients (search, metrics;
	// the controllers share them).
	MemberClients *member.Cache
	// Tunnels holds the tunnels of the pull clusters' agents
	// (clusters/tunnel), through which clusters/proxy, search and the
	// metrics APIs reach Pull clusters.
	Tunnels *tunnel.Server
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
	return CompletedConfig{host: c.Host, hostCfg: c.HostConfig, generic: c.GenericConfig.Complete(), scheme: c.Scheme, codecs: c.Codecs, search: c.Search, metrics: c.Metrics}
}

// New builds the server and installs every API group.
func (c CompletedConfig) New() (*Server, error) {
	s, err := c.generic.New("flotilla-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	opts := c.generic.RESTOptionsGetter
	secrets := informers.NewSharedInformerFactoryWithOptions(c.host, 0, informers.WithNamespace(SecretNamespace))
	secretLister := secrets.Core().V1().Secrets().Lister()
	getSecret := member.OnlyClusterSecrets(func(namespace, name string) (*corev1.Secret, error) {
		if sec, err := secretLister.Secrets(namespace).Get(name); err == nil {
			return sec, nil
		}
		// Not seen yet (just created): ask the host.
		return c.host.CoreV1().Secrets(namespace).Get(context.Background(), name, metav1.GetOptions{})
	})
	var hostProxy []proxy.Option
	if c.hostCfg != nil {
		opt, err := proxy.WithHost(c.hostCfg)
		if err != nil {
			return nil, fmt.Errorf("clusters/*/proxy: %w", err)
		}
		hostProxy = append(hostProxy, opt)
	}
	if err := s.AddPostStartHook("start-secret-informer", func(hctx genericapiserver.PostStartHookContext) error {
		secrets.Start(hctx.Done())
		return nil
	}); err != nil {
		return nil, err
	}
	// The HTTP server does not close the connections it handed over:
	// close the tunnels so their agents reconnect to another replica.
	tunnels := tunnel.NewServer()
	if err := s.AddPreShutdownHook("close-agent-tunnels", func() error {
		tunnels.Close()
		return nil
	}); err != nil {
		return nil, err
	}
	// One client per member for search and metrics (and their shared
	// informers).
	memberClients := member.NewCache(getSecret)
	memberClients.Tunnel = tunnels.DialContext
	var searchSrv *search.Server
	if c.hostCfg != nil {
		cfg := &search.Config{Options: c.search, Authorizer: c.generic.Authorization.Authorizer, GetSecret: getSecret, HostConfig: c.hostCfg, Tunnel: tunnels.DialContext, MemberClients: memberClients}
		if searchSrv, err = cfg.Complete().New(); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	groups := []*genericapiserver.APIGroupInfo{}
	add := func(g *genericapiserver.APIGroupInfo, err error) error {
		groups = append(groups, g)
		return err
	}
	// ResourceBinding writes are checked against the FederatedResourceQuotas.
	policyGroup, err := policyregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts)
	if err != nil {
		return nil, err
	}
	quotas, err := workregistry.NewQuotaLister(policyGroup.VersionedResourcesStorageMap["v1alpha1"]["federatedresourcequotas"])
	if err != nil {
		return nil, err
	}
	err = errors.Join(
		add(clusterregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts, getSecret, tunnels, hostProxy...)),
		add(policyGroup, nil),
		add(workregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts, quotas)),
		add(configregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts)),
		add(autoscalingregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts)),
		add(c.searchGroup(s, searchSrv)),
		add(networkingregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts)),
		add(appsregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts)),
		add(remedyregistry.NewAPIGroupInfo(c.scheme, c.codecs, opts)),
	)
	if err != nil {
		return nil, err
	}
	server := &Server{GenericAPIServer: s, Tunnels: tunnels, MemberClients: memberClients}
	for _, g := range groups {
		g.NegotiatedSerializer = NegotiatedSerializer(c.codecs)
		if err := s.InstallAPIGroup(g); err != nil {
			return nil, fmt.Errorf("installing %s: %w", g.PrioritizedVersions[0].Group, err)
		}
		server.GroupVersions = append(server.GroupVersions, g.PrioritizedVersions...)
	}
	if c.hostCfg != nil {
		if server.Metrics, err = c.installMetrics(s, memberClients); err != nil {
			return nil, err
		}
		server.GroupVersions = append(server.GroupVersions, metricsadapter.GroupVersions...)
		// Members whose Pods or Nodes a ResourceRegistry caches are
		// watched once, for search and metrics both.
		server.Metrics.Members.SetShared(searchSrv.SharedListerWatcher)
	}
	return server, nil
}

// searchGroup is search.karmada.io: resourceregistries, and the search
// and proxying endpoints over the member caches they drive.
func (c CompletedConfig) searchGroup(s *genericapiserver.GenericAPIServer, srv *search.Server) (*genericapiserver.APIGroupInfo, error) {
	info, err := searchregistry.NewAPIGroupInfo(c.scheme, c.codecs, c.generic.RESTOptionsGetter)
	if err != nil || srv == nil {
		return info, err
	}
	for name, st := range srv.Storage {
		info.VersionedResourcesStorageMap["v1alpha1"][name] = st
	}
	if err := s.AddPostStartHook("start-search-cache", srv.PostStartHook); err != nil {
		return nil, err
	}
	return info, nil
}

// installMetrics serves metrics.k8s.io and custom.metrics.k8s.io from the
// members' metrics.
func (c CompletedConfig) installMetrics(s *genericapiserver.GenericAPIServer, members *member.Cache) (*metricsadapter.Server, error) {
	cfg := &metricsadapter.Config{Options: c.metrics, Scheme: c.scheme, Codecs: c.codecs, HostConfig: c.hostCfg, MemberClients: members,
		Authorizer: c.generic.Authorization.Authorizer}
	m, err := cfg.Complete().New()
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	if err := m.Install(s); err != nil {
		return nil, err
	}
	if err := s.AddPostStartHook("start-metrics-members", m.PostStartHook); err != nil {
		return nil, err
	}
	return m, nil
}

// NewCodecs returns the codecs of scheme.
func NewCodecs(scheme *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(scheme)
}

// withoutProtobuf offers JSON, YAML and CBOR but not protobuf: the karmada.io
// types have no protobuf encoding, and a client that prefers it (the host's
// namespace controller deleting collections through the metadata client)
// must fall back to JSON instead of getting an encoding error.
type withoutProtobuf struct {
	serializer.CodecFactory
}

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (w withoutProtobuf) SupportedMediaTypes() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range w.CodecFactory.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			out = append(out, info)
		}
	}
	return out
}

// NegotiatedSerializer returns what the server negotiates content types with.
func NegotiatedSerializer(codecs serializer.CodecFactory) runtime.NegotiatedSerializer {
	return withoutProtobuf{codecs}
}
