package proxy

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	clienttransport "k8s.io/client-go/transport"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/member"
)

const (
	// maxIdleConnsPerHost bounds the warm connections kept to one member. A
	// member is a single host; with HTTP/2 one connection carries many
	// streams, so this only matters when a member speaks HTTP/1.1.
	maxIdleConnsPerHost = 32
	idleConnTimeout     = 90 * time.Second
	dialTimeout         = 30 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
)

// target is an immutable snapshot of everything needed to reach one member
// cluster. It is replaced as a whole, never modified.
type target struct {
	cluster string
	// key identifies the inputs the snapshot was built from (see targetKey).
	key string
	// location is the parsed spec.apiEndpoint; handlers copy it before use.
	location *url.URL
	// transport carries plain and streaming (watch, logs -f) requests.
	transport *http.Transport
	// upgradeTransport is never round-tripped: the upgrade-aware handler only
	// takes its dialer and TLS config to open the raw connection of an
	// upgraded stream. Its dialer tunnels through spec.proxyURL itself,
	// because that connection does not go through transport.Proxy.
	upgradeTransport *http.Transport
	// token is the impersonator service account's bearer token.
	token string
}

// roundTripper returns the round tripper for a request made on behalf of the
// impersonated user: impersonation headers, then the impersonator's bearer
// token, then the cluster's transport. Both wrappers only add headers the
// request does not carry, which is why the client's own are stripped first.
func (t *target) roundTripper(imp clienttransport.ImpersonationConfig) http.RoundTripper {
	return clienttransport.NewImpersonatingRoundTripper(imp, t.withToken(t.transport))
}

// withToken adds the impersonator's bearer token, when the target has one
// (a tunnel target has none: the agent authenticates to its member).
func (t *target) withToken(rt http.RoundTripper) http.RoundTripper {
	if t.token == "" {
		return rt
	}
	return clienttransport.NewBearerAuthRoundTripper(t.token, rt)
}

// upgradeRoundTripper returns the upgrade transport for the upgrade-aware
// handler: the same headers as roundTripper are written onto the upgrade
// request (MirrorRequest hands the decorated request back), and the
// connection is dialed with upgradeTransport's dialer and TLS config.
func (t *target) upgradeRoundTripper(imp clienttransport.ImpersonationConfig) utilproxy.UpgradeRequestRoundTripper {
	return utilproxy.NewUpgradeRequestRoundTripper(t.upgradeTransport,
		clienttransport.NewImpersonatingRoundTripper(imp, t.withToken(utilproxy.MirrorRequest)))
}

// close releases the idle connections of the snapshot. Requests in flight
// keep their connections until they finish.
func (t *target) close() {
	t.transport.CloseIdleConnections()
	t.upgradeTransport.CloseIdleConnections()
}

// targetCache hands out the current target of each cluster, building a new
// one only when the inputs it depends on change.
type targetCache struct {
	getCluster func(name string) (*clusterv1alpha1.Cluster, error)
	getSecret  func(namespace, name string) (*corev1.Secret, error)
	// tunnel, when set, dials the agents of Pull clusters (WithTunnel).
	tunnel func(cluster string) (func(ctx context.Context, network, addr string) (net.Conn, error), bool)

	// targets maps a cluster name to its current *target. Reads are lock-free;
	// a snapshot is swapped in whole.
	targets sync.Map
	// buildMu serialises rebuilds so that concurrent requests after a change
	// build one transport, not one each.
	buildMu sync.Mutex
}

// get returns the target of the named cluster, which must exist and be Ready.
func (c *targetCache) get(name string) (*target, error) {
	cluster, err := c.getCluster(name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			c.forget(name)
			return nil, errClusterNotFound(name)
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("getting cluster %q: %w", name, err))
	}
	if cluster == nil {
		return nil, errClusterNotFound(name)
	}
	return c.forCluster(cluster)
}

// forCluster returns the target of a cluster object, which must be Ready.
func (c *targetCache) forCluster(cluster *clusterv1alpha1.Cluster) (*target, error) {
	if !meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		return nil, errClusterNotReady(cluster.Name)
	}
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull && c.tunnel != nil {
		return c.forTunnel(cluster.Name)
	}
	in, err := c.inputsFor(cluster)
	if err != nil {
		return nil, err
	}
	if t, ok := c.load(cluster.Name); ok && t.key == in.key {
		return t, nil
	}

	c.buildMu.Lock()
	defer c.buildMu.Unlock()
	old, ok := c.load(cluster.Name)
	if ok && old.key == in.key {
		return old, nil // built by a concurrent request
	}
	t, err := newTarget(cluster, in)
	if err != nil {
		return nil, err
	}
	c.targets.Store(cluster.Name, t)
	if ok {
		old.close()
	}
	return t, nil
}

// tunnelKey is the key of every tunnel target: it depends on nothing of
// the Cluster, and its dialer finds the agent's current tunnel at each dial.
const tunnelKey = "tunnel"

// forTunnel returns the target of a Pull cluster, whose agent must be
// connected.
func (c *targetCache) forTunnel(name string) (*target, error) {
	dial, ok := c.tunnel(name)
	if !ok {
		return nil, errAgentNotConnected(name)
	}
	if t, ok := c.load(name); ok && t.key == tunnelKey {
		return t, nil
	}
	c.buildMu.Lock()
	defer c.buildMu.Unlock()
	old, ok := c.load(name)
	if ok && old.key == tunnelKey {
		return old, nil
	}
	t := newTunnelTarget(name, dial)
	c.targets.Store(name, t)
	if ok {
		old.close()
	}
	return t, nil
}

func (c *targetCache) load(name string) (*target, bool) {
	v, ok := c.targets.Load(name)
	if !ok {
		return nil, false
	}
	return v.(*target), true
}

// forget drops the target of a deleted cluster.
func (c *targetCache) forget(name string) {
	if v, ok := c.targets.LoadAndDelete(name); ok {
		v.(*target).close()
	}
}

// retain drops the targets of clusters that are not in the list.
func (c *targetCache) retain(clusters []*clusterv1alpha1.Cluster) {
	names := make(map[string]bool, len(clusters))
	for _, cl := range clusters {
		names[cl.Name] = true
	}
	c.targets.Range(func(k, _ any) bool {
		if !names[k.(string)] {
			c.forget(k.(string))
		}
		return true
	})
}

// closeAll releases the idle connections of every target.
func (c *targetCache) closeAll() {
	c.targets.Range(func(_, v any) bool {
		v.(*target).close()
		return true
	})
}

// targetInputs are the secret contents a target is built from, with the key
// identifying them together with the cluster's connection settings.
type targetInputs struct {
	key      string
	caBundle []byte
	token    string
}

// inputsFor reads the cluster's secrets and computes the snapshot key.
//
// The key holds the cluster's connection settings themselves rather than its
// resourceVersion: the status controller rewrites the Cluster's status every
// few seconds, and keying on the resourceVersion would throw away the warm
// connections each time. The secrets are keyed by resourceVersion (by content
// when an object carries none, e.g. from a fake getter).
func (c *targetCache) inputsFor(cluster *clusterv1alpha1.Cluster) (targetInputs, error) {
	spec := &cluster.Spec
	var in targetInputs
	caKey := "-"
	if ref := spec.SecretRef; ref != nil {
		secret, err := c.secret(cluster.Name, "secretRef", ref)
		if err != nil {
			return in, err
		}
		in.caBundle = secret.Data[member.SecretCABundleKey]
		caKey = secretKey(secret, in.caBundle)
	}

	ref := spec.ImpersonatorSecretRef
	if ref == nil {
		return in, errClusterUnusable(cluster.Name,
			"spec.impersonatorSecretRef is not set; the proxy needs the token of a member service account allowed to impersonate users")
	}
	secret, err := c.secret(cluster.Name, "impersonatorSecretRef", ref)
	if err != nil {
		return in, err
	}
	token := strings.TrimSpace(string(secret.Data[member.SecretTokenKey]))
	if token == "" {
		return in, errClusterUnusable(cluster.Name, "impersonator secret %s/%s has no %q key", ref.Namespace, ref.Name, member.SecretTokenKey)
	}
	in.token = token

	var b strings.Builder
	fmt.Fprintf(&b, "endpoint=%s;insecure=%t;proxy=%s;", spec.APIEndpoint, spec.InsecureSkipTLSVerification, spec.ProxyURL)
	headerKeys := make([]string, 0, len(spec.ProxyHeader))
	for k := range spec.ProxyHeader {
		headerKeys = append(headerKeys, k)
	}
	slices.Sort(headerKeys)
	for _, k := range headerKeys {
		fmt.Fprintf(&b, "header=%q:%q;", k, spec.ProxyHeader[k])
	}
	fmt.Fprintf(&b, "ca=%s;impersonator=%s", caKey, secretKey(secret, secret.Data[member.SecretTokenKey]))
	in.key = b.String()
	return in, nil
}

func (c *targetCache) secret(cluster, field string, ref *clusterv1alpha1.LocalSecretReference) (*corev1.Secret, error) {
	secret, err := c.getSecret(ref.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && secret == nil):
		return nil, errClusterUnusable(cluster, "secret %s/%s (spec.%s) not found", ref.Namespace, ref.Name, field)
	case err != nil:
		return nil, apierrors.NewInternalError(fmt.Errorf("getting secret %s/%s of cluster %q: %w", ref.Namespace, ref.Name, cluster, err))
	}
	return secret, nil
}

// secretKey identifies the version of a secret: its UID and resourceVersion,
// or a digest of the data the target uses when it has no resourceVersion.
func secretKey(s *corev1.Secret, data []byte) string {
	if s.ResourceVersion != "" {
		return fmt.Sprintf("%s/%s@%s/%s", s.Namespace, s.Name, s.UID, s.ResourceVersion)
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s/%s#%s", s.Namespace, s.Name, hex.EncodeToString(sum[:8]))
}

// newTarget builds the transports of a cluster.
func newTarget(cluster *clusterv1alpha1.Cluster, in targetInputs) (*target, error) {
	spec := &cluster.Spec
	location, err := parseEndpoint(spec.APIEndpoint)
	if err != nil {
		return nil, errClusterUnusable(cluster.Name, "%v", err)
	}

	tlsConfig := &tls.Config{
		// Like Karmada: members are Kubernetes API servers, all of which speak TLS 1.3.
		MinVersion:         tls.VersionTLS13,
		InsecureSkipVerify: spec.InsecureSkipTLSVerification, //nolint:gosec // the cluster owner's explicit choice
	}
	if len(in.caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(in.caBundle) {
			return nil, errClusterUnusable(cluster.Name, "key %q of secret %s/%s holds no PEM certificate",
				member.SecretCABundleKey, spec.SecretRef.Namespace, spec.SecretRef.Name)
		}
		tlsConfig.RootCAs = pool
	}

	// Without spec.proxyURL the environment's proxy settings apply, as for
	// every client-go transport.
	proxyFunc := utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	if spec.ProxyURL != "" {
		proxyURL, err := member.ProxyURL(spec.ProxyURL)
		if err != nil {
			return nil, errClusterUnusable(cluster.Name, "%v", err)
		}
		proxyFunc = http.ProxyURL(proxyURL)
	}
	proxyHeader := member.ProxyHeader(spec.ProxyHeader)
	dialer := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}

	rt := &http.Transport{
		Proxy:               proxyFunc,
		ProxyConnectHeader:  proxyHeader,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConfig.Clone(),
		TLSHandshakeTimeout: tlsHandshakeTimeout,
		// Keep-alives stay on, unlike Karmada (which disables them so that
		// each proxied request opens a new connection): the proxy sits on the
		// path of every kubectl call through the control plane, and a TLS
		// handshake per request adds a round trip or two of latency. The
		// snapshot is replaced, and its idle connections closed, whenever the
		// endpoint, CA, proxy or token changes, so reuse never outlives them.
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
	}
	// Enables HTTP/2 (with its connection health checks) where the member offers it.
	rt = utilnet.SetTransportDefaults(rt)

	up := &tunnelDialer{
		proxy:     proxyFunc,
		header:    proxyHeader,
		scheme:    location.Scheme,
		tlsConfig: tlsConfig.Clone(),
		dialer:    dialer,
	}
	return &target{
		cluster:   cluster.Name,
		key:       in.key,
		location:  location,
		transport: rt,
		upgradeTransport: &http.Transport{
			DialContext:     up.DialContext,
			TLSClientConfig: tlsConfig.Clone(),
		},
		token: in.token,
	}, nil
}

// newTunnelTarget builds the transports of a Pull cluster reached through
// its agent's tunnel: plain HTTP over the tunnel's streams, whatever the
// host name, with no credentials of the control plane.
func newTunnelTarget(cluster string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *target {
	return &target{
		cluster:  cluster,
		key:      tunnelKey,
		location: &url.URL{Scheme: "http", Host: member.TunnelHost(cluster)},
		transport: &http.Transport{
			DialContext:         dial,
			MaxIdleConnsPerHost: maxIdleConnsPerHost,
			IdleConnTimeout:     idleConnTimeout,
		},
		upgradeTransport: &http.Transport{DialContext: dial},
	}
}
