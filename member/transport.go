package member

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
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

// Transport is how the proxy reaches one member on behalf of its users:
// an immutable snapshot, replaced whole (and its idle connections closed)
// when the Cluster's connection settings or its Secrets change.
type Transport struct {
	// Location is the member's API server (spec.apiEndpoint, or the tunnel
	// host of a Pull member); copy it before changing it.
	Location *url.URL
	// RoundTripper carries plain and streaming (watch, logs -f) requests. It
	// holds no credentials: the caller adds Token.
	RoundTripper *http.Transport
	// Upgrade is never round-tripped: an upgrade-aware handler only takes
	// its dialer and TLS config to open the raw connection of an upgraded
	// stream (exec, attach, port-forward). Its dialer tunnels through
	// spec.proxyURL itself, because that connection does not go through
	// RoundTripper's Proxy.
	Upgrade *http.Transport
	// Token is the bearer token of the member's impersonator service account
	// (spec.impersonatorSecretRef), not the control plane's own (secretRef);
	// empty for a Pull member, whose agent authenticates to its member.
	Token string
	// key identifies the inputs the snapshot was built from (transportKey).
	key string
}

// close releases the idle connections of the snapshot. Requests in flight
// keep their connections until they finish.
func (t *Transport) close() {
	t.RoundTripper.CloseIdleConnections()
	t.Upgrade.CloseIdleConnections()
}

// ErrAgentNotConnected is wrapped by the errors about a Pull member whose
// agent has no tunnel open.
var ErrAgentNotConnected = errors.New("its agent is not connected")

// SettingsError reports a member whose Cluster settings or Secrets do not
// allow reaching it (no endpoint, no impersonator token, a bad CA
// bundle...): nothing but a change of them fixes it.
type SettingsError struct {
	Cluster string
	Reason  string
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("cluster %q cannot be reached: %s", e.Cluster, e.Reason)
}

func settingsError(cluster, format string, args ...any) error {
	return &SettingsError{Cluster: cluster, Reason: fmt.Sprintf(format, args...)}
}

// Transport returns the transport of a member, built anew only when the
// inputs it depends on changed since the last call: concurrent callers
// after a change build one, and reads of an unchanged one take no lock.
// With Tunnel set, a Pull member is reached through its agent, which must
// be connected now.
func (c *Cache) Transport(cluster *clusterv1alpha1.Cluster) (*Transport, error) {
	if c.Tunnel != nil && cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return c.tunnelTransport(cluster.Name)
	}
	secret, imp, err := c.transportSecrets(cluster)
	if err != nil {
		return nil, err
	}
	key := transportKey(cluster, secret, imp)
	return c.storeTransport(cluster.Name, key, func() (*Transport, error) {
		return newTransport(cluster, secret, imp, key)
	})
}

// tunnelTransport returns the transport of a Pull member reached through its
// agent's tunnel. Its key depends on nothing of the Cluster: the dialer finds
// the agent's current tunnel at each dial.
func (c *Cache) tunnelTransport(name string) (*Transport, error) {
	dial, ok := c.Tunnel(name)
	if !ok {
		return nil, fmt.Errorf("cluster %q is in Pull mode and %w", name, ErrAgentNotConnected)
	}
	return c.storeTransport(name, tunnelKey, func() (*Transport, error) {
		return newTunnelTransport(name, dial), nil
	})
}

// storeTransport returns the cached transport of a member when it was built
// from key, else builds, stores and returns a new one, closing the idle
// connections of the one it replaces.
func (c *Cache) storeTransport(name, key string, build func() (*Transport, error)) (*Transport, error) {
	if t, ok := c.loadTransport(name); ok && t.key == key {
		return t, nil
	}
	c.buildMu.Lock()
	defer c.buildMu.Unlock()
	old, ok := c.loadTransport(name)
	if ok && old.key == key {
		return old, nil // built by a concurrent caller
	}
	t, err := build()
	if err != nil {
		return nil, err
	}
	c.transports.Store(name, t)
	if ok {
		old.close()
	}
	return t, nil
}

func (c *Cache) loadTransport(name string) (*Transport, bool) {
	v, ok := c.transports.Load(name)
	if !ok {
		return nil, false
	}
	return v.(*Transport), true
}

// Retain forgets the members that are not in clusters.
func (c *Cache) Retain(clusters []*clusterv1alpha1.Cluster) {
	names := make(map[string]bool, len(clusters))
	for _, cl := range clusters {
		names[cl.Name] = true
	}
	c.transports.Range(func(k, _ any) bool {
		if !names[k.(string)] {
			c.Forget(k.(string))
		}
		return true
	})
	c.mu.Lock()
	for name := range c.clients {
		if !names[name] {
			delete(c.clients, name)
		}
	}
	c.mu.Unlock()
}

// CloseIdleConnections closes the idle connections of every member's
// transport.
func (c *Cache) CloseIdleConnections() {
	c.transports.Range(func(_, v any) bool {
		v.(*Transport).close()
		return true
	})
}

// transportSecrets reads the Secrets of spec.secretRef (for its caBundle;
// nil when there is none) and spec.impersonatorSecretRef.
func (c *Cache) transportSecrets(cluster *clusterv1alpha1.Cluster) (secret, imp *corev1.Secret, err error) {
	if ref := cluster.Spec.SecretRef; ref != nil {
		if secret, err = c.secret(cluster.Name, "secretRef", ref); err != nil {
			return nil, nil, err
		}
	}
	ref := cluster.Spec.ImpersonatorSecretRef
	if ref == nil {
		return nil, nil, settingsError(cluster.Name,
			"spec.impersonatorSecretRef is not set; the proxy needs the token of a member service account allowed to impersonate users")
	}
	if imp, err = c.secret(cluster.Name, "impersonatorSecretRef", ref); err != nil {
		return nil, nil, err
	}
	if impersonatorToken(imp) == "" {
		return nil, nil, settingsError(cluster.Name, "impersonator secret %s/%s has no %q key", ref.Namespace, ref.Name, names.SecretTokenKey)
	}
	return secret, imp, nil
}

func (c *Cache) secret(cluster, field string, ref *clusterv1alpha1.LocalSecretReference) (*corev1.Secret, error) {
	secret, err := c.getSecret(ref.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && secret == nil):
		return nil, settingsError(cluster, "secret %s/%s (spec.%s) not found", ref.Namespace, ref.Name, field)
	case err != nil:
		return nil, fmt.Errorf("getting secret %s/%s of cluster %q: %w", ref.Namespace, ref.Name, cluster, err)
	}
	return secret, nil
}

func impersonatorToken(s *corev1.Secret) string {
	return strings.TrimSpace(string(s.Data[names.SecretTokenKey]))
}

// transportKey is what a transport is built from: the Cluster's connection
// settings themselves rather than its resourceVersion (the status
// controller rewrites the Cluster every few seconds, and keying on it would
// throw away the warm connections each time), and the versions of its
// Secrets. secret is nil for a Cluster without secretRef.
func transportKey(cluster *clusterv1alpha1.Cluster, secret, imp *corev1.Secret) string {
	spec := &cluster.Spec
	ca := "-"
	if secret != nil {
		ca = secretVersion(secret, secret.Data[names.SecretCABundleKey])
	}
	return strings.Join([]string{
		spec.APIEndpoint, spec.ProxyURL, proxyHeaderKey(spec.ProxyHeader), strconv.FormatBool(spec.InsecureSkipTLSVerification),
		ca, secretVersion(imp, imp.Data[names.SecretTokenKey]),
	}, "\x00")
}

// secretVersion identifies the version of a Secret: its UID and
// resourceVersion, or a digest of the data used when it has no
// resourceVersion (a Secret not read from an API server).
func secretVersion(s *corev1.Secret, data []byte) string {
	if s.ResourceVersion != "" {
		return fmt.Sprintf("%s/%s@%s/%s", s.Namespace, s.Name, s.UID, s.ResourceVersion)
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s/%s#%s", s.Namespace, s.Name, hex.EncodeToString(sum[:8]))
}

// parseEndpoint parses spec.apiEndpoint, which must be an http(s) URL with a host.
func parseEndpoint(endpoint string) (*url.URL, error) {
	if endpoint == "" {
		return nil, fmt.Errorf("spec.apiEndpoint is not set")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("spec.apiEndpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("spec.apiEndpoint %q: scheme must be https or http", endpoint)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("spec.apiEndpoint %q has no host", endpoint)
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u, nil
}

// newTransport builds the transports of a Push member.
func newTransport(cluster *clusterv1alpha1.Cluster, secret, imp *corev1.Secret, key string) (*Transport, error) {
	spec := &cluster.Spec
	location, err := parseEndpoint(spec.APIEndpoint)
	if err != nil {
		return nil, settingsError(cluster.Name, "%v", err)
	}

	tlsConfig := &tls.Config{
		// Like Karmada: members are Kubernetes API servers, all of which speak TLS 1.3.
		MinVersion:         tls.VersionTLS13,
		InsecureSkipVerify: spec.InsecureSkipTLSVerification, //nolint:gosec // the cluster owner's explicit choice
	}
	if secret != nil {
		if ca := secret.Data[names.SecretCABundleKey]; len(ca) > 0 {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(ca) {
				return nil, settingsError(cluster.Name, "key %q of secret %s/%s holds no PEM certificate",
					names.SecretCABundleKey, secret.Namespace, secret.Name)
			}
			tlsConfig.RootCAs = pool
		}
	}

	// Without spec.proxyURL the environment's proxy settings apply, as for
	// every client-go transport.
	proxyFunc := utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	if spec.ProxyURL != "" {
		proxyURL, err := ProxyURL(spec.ProxyURL)
		if err != nil {
			return nil, settingsError(cluster.Name, "%v", err)
		}
		proxyFunc = http.ProxyURL(proxyURL)
	}
	proxyHeader := ProxyHeader(spec.ProxyHeader)
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

	up := &upgradeDialer{
		proxy:     proxyFunc,
		header:    proxyHeader,
		scheme:    location.Scheme,
		tlsConfig: tlsConfig.Clone(),
		dialer:    dialer,
	}
	return &Transport{
		Location:     location,
		RoundTripper: rt,
		Upgrade: &http.Transport{
			DialContext:     up.DialContext,
			TLSClientConfig: tlsConfig.Clone(),
		},
		Token: impersonatorToken(imp),
		key:   key,
	}, nil
}

// newTunnelTransport builds the transports of a Pull member reached through
// its agent's tunnel: plain HTTP over the tunnel's streams, whatever the
// host name, with no credentials of the control plane.
func newTunnelTransport(cluster string, dial DialFunc) *Transport {
	return &Transport{
		Location: &url.URL{Scheme: "http", Host: TunnelHost(cluster)},
		RoundTripper: &http.Transport{
			DialContext:         dial,
			MaxIdleConnsPerHost: maxIdleConnsPerHost,
			IdleConnTimeout:     idleConnTimeout,
		},
		Upgrade: &http.Transport{DialContext: dial},
		key:     tunnelKey,
	}
}
