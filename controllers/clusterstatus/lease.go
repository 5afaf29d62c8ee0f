package clusterstatus

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"

	"github.com/flotilla-io/flotilla/names"
)

// heartbeats runs one lease controller per cluster.
type heartbeats struct {
	// run renews the Lease of cluster name until ctx ends.
	run func(ctx context.Context, name string)

	mu      sync.Mutex
	running map[string]context.CancelFunc
}

// newHeartbeats returns the heartbeats that renew each cluster's Lease on
// host; nil (no heartbeats) when host is nil.
func newHeartbeats(host kubernetes.Interface, duration, interval time.Duration) *heartbeats {
	if host == nil {
		return nil
	}
	return &heartbeats{
		run: func(ctx context.Context, name string) {
			lease.NewController(clock.RealClock{}, host, name, int32(duration/time.Second), nil, interval, name, names.LeaseNamespace, nil).Run(ctx)
		},
		running: map[string]context.CancelFunc{},
	}
}

// start starts the heartbeat of cluster name, unless it runs.
func (h *heartbeats) start(name string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.running[name]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.running[name] = cancel
	go h.run(ctx, name)
}

// stop stops the heartbeat of cluster name.
func (h *heartbeats) stop(name string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cancel, ok := h.running[name]; ok {
		cancel()
		delete(h.running, name)
	}
}
