package tunnel

import (
	"bufio"
	"fmt"
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
	// maxStreamWindow bounds the bytes in flight on one stream, and so
	// what a stream whose reader lags holds. yamux's default (256KiB) caps
	// a stream at 256KiB per round trip, which makes large lists slow over
	// long links; 1MiB carries 10MB/s at 100ms.
	maxStreamWindow = 1 << 20
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
func isTunnelRequest(r *http.Request) bool { return isUpgradeTo(r, Protocol) }

// isUpgradeTo says whether r asks to upgrade to protocol.
func isUpgradeTo(r *http.Request, protocol string) bool {
	if !httpstream.IsUpgradeRequest(r) {
		return false
	}
	for _, v := range r.Header.Values("Upgrade") {
		for _, p := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(p), protocol) {
				return true
			}
		}
	}
	return false
}

// switchProtocols takes the connection of r over and answers 101 to
// protocol; the returned connection holds what the client sent after its
// request. On error nothing is left open.
func switchProtocols(w http.ResponseWriter, protocol string) (net.Conn, error) {
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, fmt.Errorf("the connection cannot be taken over (HTTP/2 has no upgrade): %w", err)
	}
	_ = conn.SetDeadline(time.Now().Add(connectionWriteTimeout))
	_, err = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + protocol + "\r\n\r\n")
	if err == nil {
		err = brw.Flush()
	}
	if err != nil {
		_ = conn.Close()
		return nil, errWritingUpgrade{err}
	}
	_ = conn.SetDeadline(time.Time{})
	if brw.Reader.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: brw.Reader}, nil
	}
	return conn, nil
}

// errWritingUpgrade is a failure after the connection was taken over: no
// HTTP error can be answered any more.
type errWritingUpgrade struct{ error }

func (e errWritingUpgrade) Unwrap() error { return e.error }

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
