package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/member"
)

// loopbackWatches counts the watches the server's own loopback clients
// hold open on it: one per resource, whatever reads it in the process.
var loopbackWatches = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace: "flotilla", Subsystem: "loopback", Name: "watches",
	Help:           "Watch requests flotilla-apiserver's own loopback clients (member hub, search, embedded controllers) hold open on it, by resource (resource.group).",
	StabilityLevel: metrics.ALPHA,
}, []string{"resource"})

func init() { legacyregistry.MustRegister(loopbackWatches) }

// countLoopbackWatches wraps a loopback client's transport so that its
// watches count in loopbackWatches.
var countLoopbackWatches = member.CountWatches(func(resource string) metrics.GaugeMetric {
	return loopbackWatches.WithLabelValues(resource)
})

// serveLoopbackSocket serves handler (the server's full handler chain,
// authentication and authorization included) over plain HTTP on a Unix
// socket in a private directory, until ctx ends, and returns a copy of
// loopback that reaches it. The embedded controllers send every request
// of the propagation pipeline to their own server; on the socket those
// requests skip TLS and HTTP/2 framing, which otherwise cost the server
// about a tenth of its CPU under load. Requests still carry the loopback
// token and pass the same filters.
func serveLoopbackSocket(ctx context.Context, handler http.Handler, loopback *rest.Config) (*rest.Config, error) {
	dir, err := os.MkdirTemp("", "flotilla-loopback-")
	if err != nil {
		return nil, fmt.Errorf("creating the loopback socket directory: %w", err)
	}
	path := filepath.Join(dir, "apiserver.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second, MaxHeaderBytes: 1 << 20}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Loopback socket stopped", "path", path)
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		_ = os.RemoveAll(dir)
	}()

	cfg := rest.CopyConfig(loopback)
	cfg.Host = "http://flotilla-apiserver"
	cfg.TLSClientConfig = rest.TLSClientConfig{}
	var d net.Dialer
	cfg.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "unix", path)
	}
	return cfg, nil
}
