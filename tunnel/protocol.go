package tunnel

import (
	"bufio"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream"
)

const (
	// Protocol is the Upgrade token of a tunnel request.
	Protocol = "flotilla-tunnel"
	// Subresource is the Cluster subresource agents open their tunnel on.
	Subresource = "tunnel"

	// keepAliveInterval is how often each side pings the other: a tunnel
	// whose peer is gone (a killed agent, a dropped NAT mapping) is noticed
	// within about this interval plus connectionWriteTimeout, and the pings
	// keep idle-connection timeouts of middleboxes from firing.
	keepAliveInterval      = 15 * time.Second
	connectionWriteTimeout = 10 * time.Second
	// maxStreamWindow bounds the bytes in flight on one stream. yamux's
	// default (256KiB) caps a stream at 256KiB per round trip, which makes
	// large lists slow over long links.
	maxStreamWindow = 4 << 20
)

// yamuxConfig is the session configuration of both sides.
func yamuxConfig() *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.KeepAliveInterval = keepAliveInterval
	cfg.ConnectionWriteTimeout = connectionWriteTimeout
	cfg.MaxStreamWindowSize = maxStreamWindow
	cfg.LogOutput = nil
	cfg.Logger = log.New(klogWriter{component: "yamux"}, "", 0)
	return cfg
}

// isTunnelRequest says whether r asks to upgrade to the tunnel protocol.
func isTunnelRequest(r *http.Request) bool {
	if !httpstream.IsUpgradeRequest(r) {
		return false
	}
	for _, v := range r.Header.Values("Upgrade") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), Protocol) {
				return true
			}
		}
	}
	return false
}

// klogWriter turns the lines of a standard logger (yamux's, net/http's)
// into klog messages at verbosity 2: they are about connections dropping,
// which the tunnel reports itself.
type klogWriter struct{ component string }

func (w klogWriter) Write(p []byte) (int, error) {
	klog.V(2).InfoS(strings.TrimSpace(string(p)), "component", w.component)
	return len(p), nil
}

// bufferedConn is a connection whose first bytes were already read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
