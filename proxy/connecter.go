package proxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	clienttransport "k8s.io/client-go/transport"
	"k8s.io/streaming/pkg/httpstream"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
	"github.com/flotilla-io/flotilla/watchguard"
)

// AllClusters is the cluster name that fans a proxy request out to every
// cluster (clusters/*/proxy).
const AllClusters = "*"

// defaultProbeTimeout bounds each per-cluster request of a fan-out.
const defaultProbeTimeout = 10 * time.Second

// connectMethods are the HTTP methods clusters/proxy accepts.
var connectMethods = []string{
	http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodHead, http.MethodOptions,
}

// Connecter implements rest.Connecter for the clusters/{name}/proxy
// subresource: it forwards the request to the member cluster's API server as
// the requesting user, impersonated by the cluster's impersonator service
// account. Use NewConnecter; the zero value is not usable.
type Connecter struct {
	getCluster func(name string) (*clusterv1alpha1.Cluster, error)
	// members is the process's member cache, which builds and keeps the
	// transport of each cluster (and reaches Pull clusters through their
	// agents' tunnels when its Tunnel is set).
	members      *member.Cache
	listClusters func() ([]*clusterv1alpha1.Cluster, error)
	// host serves the non-resource paths of clusters/*/proxy (WithHost).
	host         *host
	probeTimeout time.Duration
	// maxListBytes bounds the lists of all members read for one
	// clusters/*/proxy list (WithMaxListBytes).
	maxListBytes int64
}

var (
	_ rest.Connecter = &Connecter{}
	_ rest.Storage   = &Connecter{}
)

// Option configures a Connecter.
type Option func(*Connecter)

// WithFanOutTimeout bounds each per-cluster request a clusters/*/proxy
// request makes to find or list resources (default 10s).
func WithFanOutTimeout(d time.Duration) Option {
	return func(c *Connecter) {
		if d > 0 {
			c.probeTimeout = d
		}
	}
}

// WithMaxListBytes bounds the bytes of the members' lists that one
// clusters/*/proxy list reads, all members together (default
// DefaultMaxListBytes): the merged list is held in memory, so a list past
// the bound is refused with 413 rather than buffered.
func WithMaxListBytes(n int64) Option {
	return func(c *Connecter) {
		if n > 0 {
			c.maxListBytes = n
		}
	}
}

// NewConnecter returns a Connecter reaching the clusters through members,
// the process's member cache. getCluster must return an error satisfying
// apierrors.IsNotFound for a missing cluster (and members' Secret reader
// for a missing Secret); listClusters is only used by clusters/*/proxy.
func NewConnecter(
	getCluster func(name string) (*clusterv1alpha1.Cluster, error),
	members *member.Cache,
	listClusters func() ([]*clusterv1alpha1.Cluster, error),
	opts ...Option,
) *Connecter {
	c := &Connecter{
		getCluster:   getCluster,
		members:      members,
		listClusters: listClusters,
		probeTimeout: defaultProbeTimeout,
		maxListBytes: DefaultMaxListBytes,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// New returns an empty ClusterProxyOptions; it implements rest.Storage.
func (c *Connecter) New() runtime.Object {
	return &clusterv1alpha1.ClusterProxyOptions{}
}

// Destroy closes the idle connections to all member clusters; it implements rest.Storage.
func (c *Connecter) Destroy() {
	c.members.CloseIdleConnections()
}

// NewConnectOptions returns the options of a proxy request; the path below
// clusters/{name}/proxy goes into its "path" field.
func (c *Connecter) NewConnectOptions() (runtime.Object, bool, string) {
	return &clusterv1alpha1.ClusterProxyOptions{}, true, "path"
}

// ConnectMethods returns the HTTP methods proxied to member clusters.
func (c *Connecter) ConnectMethods() []string {
	return append([]string(nil), connectMethods...)
}

// Connect returns the handler forwarding one request to the named cluster,
// or to all clusters when name is "*". The requesting user must be in ctx.
func (c *Connecter) Connect(ctx context.Context, name string, options runtime.Object, r rest.Responder) (http.Handler, error) {
	var proxyPath string
	switch opts := options.(type) {
	case *clusterv1alpha1.ClusterProxyOptions:
		proxyPath = opts.Path
	case nil:
	default:
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid options object: %T", options))
	}
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("no user in the context of the proxy request to cluster %q", name))
	}
	if name == AllClusters {
		return c.fanOut(u, proxyPath, r), nil
	}
	t, err := c.target(name)
	if err != nil {
		return nil, err
	}
	return t.handler(u, proxyPath, r), nil
}

// handler returns the handler proxying one request to the cluster of t on
// behalf of u. Upgrade requests (exec, attach, port-forward) are spliced;
// other requests, including watches and logs -f, are streamed with flushing.
func (t *target) handler(u user.Info, proxyPath string, r rest.Responder) http.Handler {
	imp := ImpersonationFor(u)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		location := *t.Location
		location.Path = joinPath(t.Location.Path, proxyPath)
		location.RawPath = ""
		// The upgrade path dials Location as is, so it must carry the query.
		location.RawQuery = req.URL.RawQuery

		out := req.WithContext(req.Context())
		out.Header = SanitizeHeader(req.Header)

		h := utilproxy.NewUpgradeAwareHandler(&location, t.roundTripper(imp), true, false, utilproxy.NewErrorResponder(r))
		h.UpgradeTransport = t.upgradeRoundTripper(imp)
		// Send the member's host, not ours, in the Host header: members behind
		// an ingress or load balancer route on it.
		h.UseLocationHost = true
		if httpstream.IsUpgradeRequest(req) {
			h.ServeHTTP(w, out) // spliced: the handler hijacks w
			return
		}
		if streaming(req) {
			// A watch or a log follow: the member is read into a bounded
			// buffer, so a slow client does not hold back the member's
			// watch cache (every other watcher of the resource waits on
			// it), and a client that stops reading is cut off.
			buffered := watchguard.Buffer(w, watchguard.APIProxy, 0, 0)
			defer func() { _ = buffered.Close() }()
			h.ServeHTTP(buffered, out)
			return
		}
		// A client that stops reading is cut off rather than holding the
		// member's response and this handler.
		guarded := watchguard.Wrap(w, watchguard.APIProxy, 0)
		defer guarded.Stop()
		h.ServeHTTP(guarded, out)
	})
}

// ImpersonationFor returns who a member (or the host) should see: the user's name, UID,
// groups (without the groups every authenticated or anonymous request gets,
// which cannot be impersonated) and extras. Unlike Karmada, the UID and the
// extras are impersonated too, so that member policies keyed on them (bound
// service-account tokens, node or pod claims) see the real caller; the
// impersonator needs "impersonate" on uids and userextras for that.
func ImpersonationFor(u user.Info) clienttransport.ImpersonationConfig {
	groups := make([]string, 0, len(u.GetGroups()))
	for _, g := range u.GetGroups() {
		if g == user.AllAuthenticated || g == user.AllUnauthenticated {
			continue
		}
		groups = append(groups, g)
	}
	return clienttransport.ImpersonationConfig{
		UserName: u.GetName(),
		UID:      u.GetUID(),
		Groups:   groups,
		Extra:    u.GetExtra(),
	}
}

// SanitizeHeader returns a copy of the client's headers without credentials
// or identity claims: the member must only see the impersonator's token and
// the impersonation headers the proxy sets.
func SanitizeHeader(in http.Header) http.Header {
	out := utilnet.CloneHeader(in)
	for k := range out {
		if strippedHeader(k) {
			delete(out, k)
		}
	}
	return out
}

func strippedHeader(key string) bool {
	k := strings.ToLower(key)
	return k == "authorization" || k == "proxy-authorization" ||
		strings.HasPrefix(k, "impersonate-") || strings.HasPrefix(k, "x-remote-")
}

// streaming tells a request whose response streams for as long as the
// client wants: a watch (?watch=, or a /watch/ path) or a log follow.
func streaming(req *http.Request) bool {
	q := req.URL.Query()
	for _, k := range []string{"watch", "follow"} {
		if v := q.Get(k); v == "1" || v == "true" {
			return true
		}
	}
	return strings.Contains(req.URL.Path, "/watch/")
}
