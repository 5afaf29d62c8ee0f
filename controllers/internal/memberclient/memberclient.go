// Package memberclient builds clients of member clusters from their Cluster
// objects and the control plane's credential Secrets, caching them until the
// Cluster or Secret changes.
package memberclient

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// Secret keys of the control plane's credentials for a member (Karmada's).
const (
	SecretTokenKey    = "token"
	SecretCABundleKey = "caBundle"
)

// Client is a member's REST config and clientset.
type Client struct {
	Config    *rest.Config
	Clientset kubernetes.Interface
	key       string
}

// Cache builds and caches member clients.
type Cache struct {
	getSecret func(namespace, name string) (*corev1.Secret, error)
	// QPS and Burst of each member client: generous, so one busy member
	// never waits on a shared limiter.
	QPS   float32
	Burst int

	mu      sync.Mutex
	clients map[string]*Client
}

// NewCache returns a cache reading secrets with getSecret.
func NewCache(getSecret func(namespace, name string) (*corev1.Secret, error)) *Cache {
	return &Cache{getSecret: getSecret, QPS: 200, Burst: 400, clients: map[string]*Client{}}
}

// Get returns the client of a push cluster, built anew when the Cluster or
// its Secret changed since the last call.
func (c *Cache) Get(cluster *clusterv1alpha1.Cluster) (*Client, error) {
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %q has no secretRef", cluster.Name)
	}
	secret, err := c.getSecret(ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: reading secret %s/%s: %w", cluster.Name, ref.Namespace, ref.Name, err)
	}
	key := cluster.ResourceVersion + "/" + secret.ResourceVersion
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
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cl := &Client{Config: cfg, Clientset: cs, key: key}
	c.clients[cluster.Name] = cl
	return cl, nil
}

// Forget drops the cached client of a cluster.
func (c *Cache) Forget(name string) {
	c.mu.Lock()
	delete(c.clients, name)
	c.mu.Unlock()
}

// RESTConfig returns the configuration to reach a member with the control
// plane's credentials.
func RESTConfig(cluster *clusterv1alpha1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	if cluster.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %q has no apiEndpoint", cluster.Name)
	}
	token := string(secret.Data[SecretTokenKey])
	if token == "" {
		return nil, fmt.Errorf("cluster %q: secret %s/%s has no %q", cluster.Name, secret.Namespace, secret.Name, SecretTokenKey)
	}
	cfg := &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   secret.Data[SecretCABundleKey],
			Insecure: cluster.Spec.InsecureSkipTLSVerification,
		},
	}
	if cluster.Spec.InsecureSkipTLSVerification {
		cfg.CAData = nil
	}
	if cluster.Spec.ProxyURL != "" {
		u, err := url.Parse(cluster.Spec.ProxyURL)
		if err != nil {
			return nil, fmt.Errorf("cluster %q: proxyURL: %w", cluster.Name, err)
		}
		cfg.Proxy = http.ProxyURL(u)
	}
	return cfg, nil
}
