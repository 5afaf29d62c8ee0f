package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// Path is where the metrics are served.
const Path = "/metrics"

// BindAddressFlag is Karmada's flag of the metrics listener.
const BindAddressFlag = "metrics-bind-address"

// DefaultBindAddress is Karmada's default for its controller-manager and
// agent.
const DefaultBindAddress = ":8080"

// Disabled tells whether a --metrics-bind-address turns the listener off.
func Disabled(addr string) bool { return addr == "" || addr == "0" }

// Serve serves the process's metrics (legacyregistry) at Path over plain
// HTTP on addr, as Karmada's components do, until ctx ends. It returns
// once listening, with the address it listens on (addr may have port 0),
// or nil when addr disables it.
func Serve(ctx context.Context, addr string) (net.Addr, error) {
	if Disabled(addr) {
		return nil, nil
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", BindAddressFlag, err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, legacyregistry.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown) // the process is ending; nothing to do with a failure
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "Serving metrics stopped", "address", ln.Addr().String())
		}
	}()
	return ln.Addr(), nil
}
