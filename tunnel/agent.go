package tunnel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

const (
	// minBackoff and maxBackoff bound the agent's wait before reconnecting.
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
	// dialTimeout bounds connecting to the control plane and its answer to
	// the upgrade request.
	dialTimeout = 30 * time.Second
	// streamIdleTimeout closes a stream (one HTTP connection from the
	// control plane) after this long without a request. The control plane's
	// transports drop idle connections sooner (90s).
	streamIdleTimeout = 5 * time.Minute
)

// RunAgent keeps the tunnel of cluster open from the agent's side until ctx
// ends, and serves the control plane's requests through it by forwarding
// them to the member's API server.
//
// controlPlane reaches the host API server with the agent's identity
// (system:karmada:agent:<cluster>: client certificate or token, TLS verified
// with its CA); the tunnel is an upgrade request to
// /apis/cluster.karmada.io/v1alpha1/clusters/<cluster>/tunnel there. member
// reaches the member's API server with the agent's member identity, which
// sends every forwarded request: that identity needs the impersonate verb
// (users, groups, serviceaccounts, uids, userextras) for clusters/proxy,
// and read access to what search and the metrics adapter read (see the
// package documentation).
//
// RunAgent reconnects after any failure, waiting 1s, then twice as long
// each time up to 30s, and 1s again after a tunnel that was up. It returns
// an error only when the configurations are unusable, and nil when ctx ends.
// It listens on no port.
func RunAgent(ctx context.Context, controlPlane *rest.Config, cluster string, member *rest.Config) error {
	a, err := newAgent(controlPlane, cluster, member)
	if err != nil {
		return err
	}
	a.run(ctx)
	return nil
}

// agent is the agent side of one cluster's tunnel.
type agent struct {
	cluster string
	// url is the tunnel subresource on the control plane.
	url string
	// client sends the upgrade request with the agent's credentials.
	client *http.Client
	// handler serves the control plane's requests (forwardToMember).
	handler http.Handler
	config  *yamux.Config

	minBackoff, maxBackoff time.Duration
}

func newAgent(controlPlane *rest.Config, cluster string, member *rest.Config) (*agent, error) {
	if cluster == "" {
		return nil, errors.New("tunnel: no cluster name")
	}
	if controlPlane == nil || member == nil {
		return nil, errors.New("tunnel: the control plane and member configurations are required")
	}
	u, client, err := tunnelClient(controlPlane, cluster)
	if err != nil {
		return nil, fmt.Errorf("tunnel: control plane configuration: %w", err)
	}
	h, err := forwardToMember(member)
	if err != nil {
		return nil, fmt.Errorf("tunnel: member configuration: %w", err)
	}
	return &agent{cluster: cluster, url: u, client: client, handler: h, config: yamuxConfig(),
		minBackoff: minBackoff, maxBackoff: maxBackoff}, nil
}

// tunnelClient returns the tunnel's URL and the client that sends its
// upgrade request: the configuration's TLS (client certificates included),
// authentication, impersonation and proxy, over HTTP/1.1 only, since
// HTTP/2 has no upgrade.
func tunnelClient(cfg *rest.Config, cluster string) (string, *http.Client, error) {
	u, err := tunnelURL(cfg, cluster)
	if err != nil {
		return "", nil, err
	}
	c, err := upgradeClient(cfg)
	return u, c, err
}

// tunnelURL is the URL of cluster's clusters/{name}/tunnel on the server of cfg.
func tunnelURL(cfg *rest.Config, cluster string) (string, error) {
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return "", err
	}
	u := *base
	u.Path = path.Join("/", base.Path, "apis", clusterv1alpha1.GroupName, clusterv1alpha1.SchemeGroupVersion.Version, "clusters", cluster, Subresource)
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String(), nil
}

// upgradeClient returns the client that sends upgrade requests with cfg.
func upgradeClient(cfg *rest.Config) (*http.Client, error) {
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, err
	}
	tlsConfig, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		tlsConfig.NextProtos = []string{"http/1.1"}
	}
	proxy := tc.Proxy
	if proxy == nil {
		proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	dial := (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	if tc.DialHolder != nil {
		dial = tc.DialHolder.Dial
	}
	base1 := &http.Transport{
		Proxy:                 proxy,
		DialContext:           dial,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: dialTimeout,
		MaxIdleConnsPerHost:   1,
		IdleConnTimeout:       30 * time.Second,
	}
	rt, err := transport.HTTPWrappersForConfig(tc, base1)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport: rt,
		// The upgrade is answered, not redirected.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// run connects and serves until ctx ends.
func (a *agent) run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("cluster", a.cluster)
	ctx = klog.NewContext(ctx, logger)
	delay := a.minBackoff
	for {
		up, err := a.serveOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if up {
			delay = a.minBackoff
		}
		pause := time.Duration(float64(delay) * (1 + 0.2*rand.Float64()))
		logger.Error(err, "Tunnel to the control plane is down; reconnecting", "after", pause.Round(10*time.Millisecond))
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, a.maxBackoff)
	}
}

// serveOnce opens the tunnel and serves it until it closes; up says whether
// the upgrade succeeded. It always returns an error, nil only when ctx ended.
func (a *agent) serveOnce(ctx context.Context) (up bool, err error) {
	logger := klog.FromContext(ctx)
	conn, err := a.dial(ctx)
	if err != nil {
		return false, err
	}
	mux, err := yamux.Server(conn, a.config)
	if err != nil {
		_ = conn.Close()
		return false, err
	}
	stop := context.AfterFunc(ctx, func() { _ = mux.Close() })
	defer stop()
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: dialTimeout,
		IdleTimeout:       streamIdleTimeout,
		ErrorLog:          log.New(klogWriter{component: "tunnel-http"}, "", 0),
		// Requests in flight end with the agent.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	logger.Info("Tunnel to the control plane is up", "url", a.url)
	// Serve returns when the session ends: Accept fails.
	err = srv.Serve(mux)
	_ = mux.Close()
	_ = srv.Close()
	if ctx.Err() != nil {
		return true, nil
	}
	if err == nil || errors.Is(err, yamux.ErrSessionShutdown) {
		err = errors.New("the tunnel closed")
	}
	return true, err
}

// dial sends the upgrade request and returns the upgraded connection.
func (a *agent) dial(ctx context.Context) (io.ReadWriteCloser, error) {
	conn, err := upgrade(ctx, a.client, a.url, Protocol)
	if err != nil {
		return nil, fmt.Errorf("opening the tunnel: %w", err)
	}
	return conn, nil
}

// upgrade POSTs an upgrade to protocol at url and returns the upgraded
// connection.
func upgrade(ctx context.Context, client *http.Client, url, protocol string) (io.ReadWriteCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", protocol)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer func() { _ = resp.Body.Close() }()
		return nil, refused(resp)
	}
	conn, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("the upgraded connection is not writable (%T)", resp.Body)
	}
	return conn, nil
}

// refused describes a refused upgrade, with the Status message the API
// server sent when there is one.
func refused(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := strings.TrimSpace(string(body))
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		msg = st.Message
	}
	if msg == "" {
		return fmt.Errorf("the control plane refused the tunnel: %s", resp.Status)
	}
	return fmt.Errorf("the control plane refused the tunnel: %s: %s", resp.Status, msg)
}
