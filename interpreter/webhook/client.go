package webhook

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	webhookutil "k8s.io/apiserver/pkg/util/webhook"
)

// ServiceResolver turns the Service reference of a webhook's clientConfig
// into the URL to call (scheme, host and port; the path is added after),
// as for the API server's own webhooks.
type ServiceResolver = webhookutil.ServiceResolver

// NewDefaultServiceResolver returns the resolver used when Options has none:
// it resolves to https://<name>.<namespace>.svc:<port>, which only works where
// cluster DNS resolves service names.
func NewDefaultServiceResolver() ServiceResolver { return webhookutil.NewDefaultServiceResolver() }

// serviceHost is the DNS name a service's serving certificate is issued for.
func serviceHost(namespace, name string) string {
	return name + "." + namespace + ".svc"
}

// endpoint is where and how to reach a webhook.
type endpoint struct {
	// url is the full URL to POST to.
	url *url.URL
	// serverName, when set, is the name the server certificate is verified
	// against instead of the URL's host: a Service's DNS name, since a
	// resolver may return an IP address.
	serverName string
}

// resolveEndpoint works out where to reach a webhook from its clientConfig:
// the URL if set, otherwise the resolved Service plus its path.
func (i *Interpreter) resolveEndpoint(cc *admissionregistrationv1.WebhookClientConfig) (endpoint, error) {
	switch {
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return endpoint{}, fmt.Errorf("parsing url: %w", err)
		}
		if u.Scheme != "https" || u.Host == "" {
			return endpoint{}, fmt.Errorf("url %q: want https://host[:port][/path]", *cc.URL)
		}
		return endpoint{url: u}, nil
	case cc.Service != nil:
		s := cc.Service
		port := int32(443)
		if s.Port != nil {
			port = *s.Port
		}
		u, err := i.resolver.ResolveEndpoint(s.Namespace, s.Name, port)
		if err != nil {
			return endpoint{}, fmt.Errorf("resolving service %s/%s: %w", s.Namespace, s.Name, err)
		}
		full := *u // the resolver's URL is not ours to change
		if s.Path != nil {
			full.Path = *s.Path
		}
		return endpoint{url: &full, serverName: serviceHost(s.Namespace, s.Name)}, nil
	default:
		return endpoint{}, errors.New("clientConfig has neither url nor service")
	}
}

// clientKey identifies a webhook across calls.
type clientKey struct {
	config, webhook string
}

// cachedClient is a client and what it was built from.
type cachedClient struct {
	// fingerprint is the caBundle hash, URL and server name the client was
	// built for.
	fingerprint string
	client      *http.Client
}

// clientCache holds one HTTP client per webhook. An entry is rebuilt when the
// caBundle, URL or server name of its webhook changes, so together with the
// key the cache is keyed by (configuration, webhook, caBundle hash, URL)
// while holding at most one client per webhook.
type clientCache struct {
	mu      sync.Mutex
	clients map[clientKey]cachedClient
}

func newClientCache() *clientCache {
	return &clientCache{clients: map[clientKey]cachedClient{}}
}

// get returns the client for key, building it if there is none for the
// current caBundle and endpoint.
func (c *clientCache) get(key clientKey, caBundle []byte, ep endpoint) (*http.Client, error) {
	sum := sha256.Sum256(caBundle)
	fp := hex.EncodeToString(sum[:]) + "|" + ep.url.String() + "|" + ep.serverName

	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.clients[key]
	if ok && old.fingerprint == fp {
		return old.client, nil
	}
	client, err := newHTTPClient(caBundle, ep.serverName)
	if err != nil {
		return nil, err
	}
	if ok {
		// In-flight calls on the old client finish; its idle connections go.
		old.client.CloseIdleConnections()
	}
	c.clients[key] = cachedClient{fingerprint: fp, client: client}
	return client, nil
}

// newHTTPClient returns a client that verifies servers against caBundle, or
// against the system roots when caBundle is empty. It has no timeout of its
// own: each call carries the webhook's timeout in its context.
func newHTTPClient(caBundle []byte, serverName string) (*http.Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("caBundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSClientConfig:     tlsConfig,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 25,
		IdleConnTimeout:     90 * time.Second,
		// HTTP/1.1, as the API server calls its webhooks: one HTTP/2
		// connection would send every call to the same backend of a
		// Service (https://issue.k8s.io/75791).
	}
	return &http.Client{
		Transport: transport,
		// A webhook answers; it does not send the control plane elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
