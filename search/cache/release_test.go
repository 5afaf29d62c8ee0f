package cache

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestReleaserCoalescesABurst(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	r := &releaser{free: func() { n.Add(1) }, delay: 20 * time.Millisecond}
	for range 5 {
		r.request()
	}
	time.Sleep(200 * time.Millisecond)
	if got := n.Load(); got != 1 {
		t.Fatalf("%d releases for a burst, want 1", got)
	}
	r.request()
	time.Sleep(200 * time.Millisecond)
	if got := n.Load(); got != 2 {
		t.Fatalf("%d releases after a second request, want 2", got)
	}
}
