package member

import (
	"context"
	"fmt"
	"net"

	"k8s.io/client-go/rest"
)

// DialFunc opens a connection to a member.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// TunnelDialer returns the dialer of a Pull cluster's tunnel and whether its
// agent is connected now (tunnel.Server.DialContext).
type TunnelDialer func(cluster string) (DialFunc, bool)

// tunnelKey is the connection key of every tunnel client and transport: the
// dialer finds the agent's current tunnel at each dial, so reconnects need
// no new client.
const tunnelKey = "tunnel"

// TunnelRESTConfig returns the configuration reaching a Pull cluster through
// its agent's tunnel: plain HTTP to a placeholder host over dial, with no
// credentials. The agent sends the requests to its member with its own
// member identity, so a client of this configuration has the agent's rights
// in the member (plus whatever it impersonates).
func TunnelRESTConfig(cluster string, dial DialFunc) *rest.Config {
	return &rest.Config{Host: "http://" + TunnelHost(cluster), Dial: dial}
}

// getTunnel returns the client of a Pull cluster. A new client needs the
// agent connected; a cached one is returned whatever the tunnel's state, so
// informers built on it ride out a reconnect (their watches fail, then
// resume) instead of being rebuilt.
func (c *Cache) getTunnel(name string) (*Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[name]; ok && cl.key == tunnelKey {
		return cl, nil
	}
	dial, ok := c.Tunnel(name)
	if !ok {
		return nil, fmt.Errorf("cluster %q is in Pull mode and %w", name, ErrAgentNotConnected)
	}
	cfg := TunnelRESTConfig(name, dial)
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	cfg.Wrap(countWatches(name))
	cfg.Wrap(c.WrapTransport)
	cl, err := newClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", name, err)
	}
	cl.key = tunnelKey
	c.clients[name] = cl
	return cl, nil
}

// TunnelHost is the placeholder host of requests sent to a Pull cluster
// through its agent's tunnel: the tunnel's streams reach the agent whatever
// the host, and the agent sends them on to its member.
func TunnelHost(cluster string) string { return cluster + ".tunnel" }
