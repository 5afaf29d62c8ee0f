package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/emicklei/go-restful/v3"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapi "k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	clientrest "k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/metrics/pkg/apis/metrics"
	cmapiserver "sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	cminstaller "sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver/installer"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
	cmstorage "sigs.k8s.io/custom-metrics-apiserver/pkg/registry/custom_metrics"

	"github.com/flotilla-io/flotilla/member"
	memberaccess "github.com/flotilla-io/flotilla/member/access"
	"github.com/flotilla-io/flotilla/metricsapi/provider"
)

// Options are the flags of the metrics APIs.
type Options struct {
	// MemberTimeout bounds each member's answer to one request.
	MemberTimeout time.Duration
	// MemberAuthorization checks each request against the member's own
	// RBAC too (a SubjectAccessReview there), not only clusters/proxy on
	// the control plane.
	MemberAuthorization bool
}

// NewOptions returns the defaults.
func NewOptions() Options { return Options{MemberTimeout: 3 * time.Second, MemberAuthorization: true} }

// AddFlags adds the flags of the metrics APIs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.MemberTimeout, "metrics-member-timeout", o.MemberTimeout,
		"longest wait for one member's answer to a metrics.k8s.io or custom.metrics.k8s.io request; a member slower than this is left out of the answer with a warning")
	fs.BoolVar(&o.MemberAuthorization, "metrics-member-authorization", o.MemberAuthorization,
		"serve a caller only the metrics the member's own RBAC lets it read (SubjectAccessReviews in the member, remembered 10s); "+
			"when off, being allowed clusters/proxy of a cluster on the control plane is enough")
}

// Config is what the metrics APIs need from the server.
type Config struct {
	Options
	// Scheme and Codecs are the server's; metrics.k8s.io is installed in
	// the scheme (InstallScheme).
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
	// HostConfig reaches the host API server, whose discovery maps the
	// resources of custom metrics requests to kinds.
	HostConfig *clientrest.Config
	// Members are the process's member hub: which members have the pods
	// or nodes a request names, and their clients. Required.
	Members *member.Hub
	// Authorizer authorizes on the control plane (the server's delegating
	// authorizer): a caller sees the metrics of the clusters it may reach
	// through clusters/{name}/proxy. Required.
	Authorizer authorizer.Authorizer
}

// CompletedConfig is a Config with defaults filled in.
type CompletedConfig struct{ *Config }

// Complete fills in defaults; it does no I/O.
func (c *Config) Complete() CompletedConfig {
	if c.MemberTimeout <= 0 {
		c.MemberTimeout = NewOptions().MemberTimeout
	}
	return CompletedConfig{c}
}

// Server is the metrics APIs.
type Server struct {
	cfg      CompletedConfig
	resource map[string]rest.Storage
	custom   *provider.Custom
}

// GroupVersions are the group versions the server serves, for its
// APIServices.
var GroupVersions = []schema.GroupVersion{
	{Group: metrics.GroupName, Version: "v1beta1"},
	{Group: custom_metrics.GroupName, Version: "v1beta2"},
	{Group: custom_metrics.GroupName, Version: "v1beta1"},
}

// New builds the metrics APIs.
func (c CompletedConfig) New() (*Server, error) {
	if c.Authorizer == nil {
		return nil, errors.New("an authorizer is required: metrics are served only to callers allowed clusters/proxy")
	}
	if c.Members == nil {
		return nil, errors.New("the member hub is required")
	}
	s := &Server{cfg: c}
	members := newMembers(c.Members, c.MemberTimeout)
	access := &memberaccess.Checker{Host: c.Authorizer}
	if c.MemberAuthorization {
		// Asked with the control plane's credentials in the member, as
		// search asks.
		access.MemberReview = memberaccess.NewReviewer(func(cluster string) (kubernetes.Interface, error) {
			mem, ok := c.Members.Member(cluster)
			if !ok {
				return nil, fmt.Errorf("cluster %q is not ready", cluster)
			}
			return mem.Client.Clientset, nil
		})
	}
	s.resource = map[string]rest.Storage{
		"pods":  &provider.PodMetrics{Members: members, Timeout: c.MemberTimeout, Access: access},
		"nodes": &provider.NodeMetrics{Members: members, Timeout: c.MemberTimeout, Access: access},
	}
	mapper, err := hostMapper(c.HostConfig)
	if err != nil {
		return nil, err
	}
	s.custom = &provider.Custom{Members: members, Timeout: c.MemberTimeout, Mapper: mapper, ListInterval: 15 * time.Second, Access: access}
	return s, nil
}

func hostMapper(cfg *clientrest.Config) (meta.RESTMapper, error) {
	if cfg == nil {
		return meta.NewDefaultRESTMapper(nil), nil
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery())), nil
}

// Install serves metrics.k8s.io/v1beta1 and custom.metrics.k8s.io (v1beta2,
// v1beta1) from g.
func (s *Server) Install(g *genericapiserver.GenericAPIServer) error {
	info := genericapiserver.NewDefaultAPIGroupInfo(metrics.GroupName, s.cfg.Scheme, runtime.NewParameterCodec(s.cfg.Scheme), s.cfg.Codecs)
	info.PrioritizedVersions = []schema.GroupVersion{{Group: metrics.GroupName, Version: "v1beta1"}}
	info.VersionedResourcesStorageMap["v1beta1"] = s.resource
	if err := g.InstallAPIGroup(&info); err != nil {
		return fmt.Errorf("installing %s: %w", metrics.GroupName, err)
	}
	return installCustomMetrics(g, s.custom)
}

// callerMetrics lists the custom metrics the caller of a request may see.
type callerMetrics interface {
	ListMetricsFor(ctx context.Context) []cmprovider.CustomMetricInfo
}

// installCustomMetrics serves a custom metrics provider with the
// custom-metrics-apiserver installer, into our server rather than the one
// that library would build. Each version's discovery document lists the
// metrics of the clusters its caller may reach (the library's lists every
// member's, for everybody).
func installCustomMetrics(g *genericapiserver.GenericAPIServer, p *provider.Custom) error {
	scheme, codecs := cmapiserver.Scheme, cmapiserver.Codecs
	info := genericapiserver.NewDefaultAPIGroupInfo(custom_metrics.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	container := g.Handler.GoRestfulContainer
	for i, gv := range info.PrioritizedVersions {
		api := &cminstaller.MetricsAPIGroupVersion{
			DynamicStorage: cmstorage.NewREST(p),
			APIGroupVersion: &genericapi.APIGroupVersion{
				Root:             genericapiserver.APIGroupPrefix,
				GroupVersion:     gv,
				MetaGroupVersion: info.MetaGroupVersion,
				ParameterCodec:   info.ParameterCodec,
				Serializer:       info.NegotiatedSerializer,
				Creater:          scheme,
				Convertor:        scheme,
				UnsafeConvertor:  runtime.UnsafeObjectConvertor(scheme),
				Typer:            scheme,
				Namer:            runtime.Namer(meta.NewAccessor()),
			},
			ResourceLister: cmprovider.NewCustomMetricResourceLister(p),
			Handlers:       &cminstaller.CMHandlers{},
		}
		if err := api.InstallREST(container); err != nil {
			return fmt.Errorf("installing %s: %w", gv, err)
		}
		root := path.Join(genericapiserver.APIGroupPrefix, gv.Group, gv.Version)
		for _, ws := range container.RegisteredWebServices() {
			if ws.RootPath() == root {
				ws.Filter(callerDiscovery(root, gv, info.NegotiatedSerializer, p))
			}
		}
		if i == 0 {
			versions := make([]metav1.GroupVersionForDiscovery, len(info.PrioritizedVersions))
			for j, v := range info.PrioritizedVersions {
				versions[j] = metav1.GroupVersionForDiscovery{GroupVersion: v.String(), Version: v.Version}
			}
			group := metav1.APIGroup{Name: gv.Group, Versions: versions, PreferredVersion: versions[0]}
			g.DiscoveryGroupManager.AddGroup(group)
			container.Add(discovery.NewAPIGroupHandler(g.Serializer, group).WebService())
		}
	}
	return nil
}

// callerDiscovery answers GET of a custom metrics version's discovery
// document (root) with the metrics the caller may see; every other
// request of the version goes on.
func callerDiscovery(root string, gv schema.GroupVersion, serializer runtime.NegotiatedSerializer, p callerMetrics) restful.FilterFunction {
	return func(req *restful.Request, resp *restful.Response, chain *restful.FilterChain) {
		r := req.Request
		if r.Method != http.MethodGet || strings.TrimSuffix(r.URL.Path, "/") != root {
			chain.ProcessFilter(req, resp)
			return
		}
		lister := cmprovider.NewCustomMetricResourceLister(listed(p.ListMetricsFor(r.Context())))
		discovery.NewAPIVersionHandler(serializer, gv, lister).ServeHTTP(resp.ResponseWriter, r)
	}
}

// listed is a provider whose metrics are a fixed list, for the library's
// resource lister; it serves no values.
type listed []cmprovider.CustomMetricInfo

func (l listed) ListAllMetrics() []cmprovider.CustomMetricInfo { return l }

func (listed) GetMetricByName(context.Context, types.NamespacedName, cmprovider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValue, error) {
	return nil, errors.New("a discovery list serves no values")
}

func (listed) GetMetricBySelector(context.Context, string, labels.Selector, cmprovider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
	return nil, errors.New("a discovery list serves no values")
}
