package clusterstatus

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// heartbeats runs one lease controller per cluster.
type heartbeats struct {
	host     kubernetes.Interface
	duration time.Duration
	interval time.Duration

	mu      sync.Mutex
	running map[string]context.CancelFunc
}

func (h *heartbeats) start(name string) {
	if h == nil || h.host == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.running[name]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.running[name] = cancel
	c := lease.NewController(clock.RealClock{}, h.host, name, int32(h.duration/time.Second), nil, h.interval, name, clusterv1alpha1.LeaseNamespace, nil)
	go c.Run(ctx)
}

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
