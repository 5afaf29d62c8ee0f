package member

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// Client is a member's REST config and clients.
type Client struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
	// Dynamic reaches objects of any kind in the member.
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources from the member's discovery, fetched
	// on first use and cached; Reset it when a kind is not found, so kinds
	// installed since (CRDs) are discovered again.
	Mapper meta.ResettableRESTMapper
	key    string
}

// Key identifies the connection the client was built for: it changes when
// the member's endpoint, proxy, TLS settings or credentials change, so
// holders of long-lived state built from the client (informers) know when
// to rebuild it.
func (c *Client) Key() string { return c.key }

// Cache builds and caches member clients and the transports of the
// proxy: the one place that knows how to reach a member. A process has
// one, shared by every reader.
type Cache struct {
	getSecret func(namespace, name string) (*corev1.Secret, error)
	// QPS and Burst of each member client: generous, so one busy member
	// never waits on a shared limiter.
	QPS   float32
	Burst int
	// WrapTransport, when set, wraps the transport of every member client
	// built afterwards (tests count requests with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Tunnel, when set, gives the clients of Pull clusters: they reach the
	// member through its agent's tunnel (TunnelRESTConfig) instead of its
	// apiEndpoint and secretRef.
	Tunnel TunnelDialer

	mu      sync.Mutex
	clients map[string]*Client
	// pinned clients are returned for their cluster whatever its Cluster
	// says (the agent's own member).
	pinned map[string]*Client

	// transports maps a cluster name to its current *Transport (the
	// proxy's). Reads are lock-free; a snapshot is swapped in whole.
	transports sync.Map
	// buildMu serialises transport builds so that concurrent requests
	// after a change build one transport, not one each.
	buildMu sync.Mutex
}

// SecretGetter reads a Secret of the control plane.
type SecretGetter func(namespace, name string) (*corev1.Secret, error)

// OnlyClusterSecrets refuses to read credentials outside the cluster
// namespace (names.SecretNamespace), whatever a Cluster's spec
// says: validation refuses other namespaces, and this keeps a Cluster
// stored before that rule, or written around it, from making the control
// plane read (and send to the cluster's apiEndpoint) another namespace's
// Secrets with its own rights.
func OnlyClusterSecrets(get SecretGetter) SecretGetter {
	return func(namespace, name string) (*corev1.Secret, error) {
		if namespace != names.SecretNamespace {
			return nil, fmt.Errorf("secret %s/%s: the control plane reads member credentials only in namespace %s", namespace, name, names.SecretNamespace)
		}
		return get(namespace, name)
	}
}

// NewCache returns a cache reading secrets with getSecret.
func NewCache(getSecret func(namespace, name string) (*corev1.Secret, error)) *Cache {
	return &Cache{getSecret: getSecret, QPS: 200, Burst: 400, clients: map[string]*Client{}}
}

// Get returns the client of a push cluster, built anew when the Cluster's
// connection settings or its Secret changed since the last call; with
// Tunnel set, the client of a Pull cluster reaches it through its agent.
func (c *Cache) Get(cluster *clusterv1alpha1.Cluster) (*Client, error) {
	c.mu.Lock()
	pinned, ok := c.pinned[cluster.Name]
	c.mu.Unlock()
	if ok {
		return pinned, nil
	}
	if c.Tunnel != nil && cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return c.getTunnel(cluster.Name)
	}
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %q has no secretRef", cluster.Name)
	}
	secret, err := c.getSecret(ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: reading secret %s/%s: %w", cluster.Name, ref.Namespace, ref.Name, err)
	}
	key := connectionKey(cluster, secret)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[cluster.Name]; ok && cl.key == key {
		return cl, nil
	}
	cfg, err := RESTConfig(cluster, secret)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	cfg.Wrap(countWatches(cluster.Name))
	cfg.Wrap(c.WrapTransport)
	cl, err := newClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", cluster.Name, err)
	}
	cl.key = key
	c.clients[cluster.Name] = cl
	return cl, nil
}

// newClient builds the clients of one member configuration.
func newClient(cfg *rest.Config) (*Client, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	return &Client{Config: cfg, Clientset: cs, Dynamic: dyn, Mapper: mapper}, nil
}

// connectionKey is what a member client is built from. The Cluster's
// resourceVersion is not part of it: status updates change it every few
// seconds and must not throw away the clients and their discovery caches.
func connectionKey(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) string {
	return strings.Join([]string{
		cluster.Spec.APIEndpoint, cluster.Spec.ProxyURL, proxyHeaderKey(cluster.Spec.ProxyHeader), strconv.FormatBool(cluster.Spec.InsecureSkipTLSVerification),
		secret.Namespace, secret.Name, string(secret.UID), secret.ResourceVersion,
	}, "\x00")
}

// Forget drops the cached client and transport of a cluster (deleted),
// closing the transport's idle connections.
func (c *Cache) Forget(name string) {
	c.mu.Lock()
	delete(c.clients, name)
	c.mu.Unlock()
	if v, ok := c.transports.LoadAndDelete(name); ok {
		v.(*Transport).close()
	}
}

// RESTConfig returns the configuration to reach a member with the control
// plane's credentials.
func RESTConfig(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if cluster.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %q has no apiEndpoint", cluster.Name)
	}
	token := string(secret.Data[names.SecretTokenKey])
	if token == "" {
		return nil, fmt.Errorf("cluster %q: secret %s/%s has no %q", cluster.Name, secret.Namespace, secret.Name, names.SecretTokenKey)
	}
	cfg := &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   secret.Data[names.SecretCABundleKey],
			Insecure: cluster.Spec.InsecureSkipTLSVerification,
		},
	}
	if cluster.Spec.InsecureSkipTLSVerification {
		cfg.CAData = nil
	}
	if cluster.Spec.ProxyURL != "" {
		u, err := ProxyURL(cluster.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("cluster %q: %w", cluster.Name, err)
		}
		cfg.Proxy = http.ProxyURL(u)
		if h := ProxyHeader(cluster.Spec.ProxyHeader); h != nil {
			cfg.Wrap(withProxyConnectHeader(h))
		}
	}
	return cfg, nil
}
