package clusterstatus

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	type op struct {
		start bool // start, else stop
		name  string
	}
	tests := []struct {
		name string
		ops  []op
		// wantRuns are the heartbeats run, in order; wantRunning those
		// whose context is still live at the end.
		wantRuns    []string
		wantRunning []string
	}{
		{name: "started once however often asked", ops: []op{{true, "a"}, {true, "a"}},
			wantRuns: []string{"a"}, wantRunning: []string{"a"}},
		{name: "stopped: its context ends", ops: []op{{true, "a"}, {true, "b"}, {false, "a"}},
			wantRuns: []string{"a", "b"}, wantRunning: []string{"b"}},
		{name: "started again after a stop", ops: []op{{true, "a"}, {false, "a"}, {true, "a"}},
			wantRuns: []string{"a", "a"}, wantRunning: []string{"a"}},
		{name: "stopping what never ran: nothing", ops: []op{{false, "a"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			type run struct {
				ctx  context.Context
				name string
			}
			started := make(chan run, len(tc.ops))
			var runs []string
			var ctxs []context.Context
			h := &heartbeats{running: map[string]context.CancelFunc{},
				run: func(ctx context.Context, name string) { started <- run{ctx, name} }}
			for _, o := range tc.ops {
				if !o.start {
					h.stop(o.name)
					continue
				}
				h.start(o.name)
				// A heartbeat runs in its own goroutine: wait a moment for
				// it (none comes when it already ran).
				select {
				case r := <-started:
					ctxs, runs = append(ctxs, r.ctx), append(runs, r.name)
				case <-time.After(100 * time.Millisecond):
				}
			}
			if diff := cmp.Diff(tc.wantRuns, runs); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			var running []string
			for i, ctx := range ctxs {
				if ctx.Err() == nil {
					running = append(running, runs[i])
				}
			}
			if diff := cmp.Diff(tc.wantRunning, running); diff != "" {
				t.Errorf("running (-want +got):\n%s", diff)
			}
			for _, cancel := range h.running {
				cancel()
			}
		})
	}
	t.Run("no host: no heartbeats", func(t *testing.T) {
		t.Parallel()
		h := newHeartbeats(nil, 0, 0)
		h.start("a") // must not panic
		h.stop("a")
	})
}
