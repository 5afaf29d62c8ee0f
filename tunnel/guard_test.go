package tunnel

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
)

// scriptedConn hands out its bytes in reads of the given sizes.
type scriptedConn struct {
	net.Conn
	data  []byte
	sizes []int
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.sizes) > 0 {
		n, c.sizes = min(n, c.sizes[0]), c.sizes[1:]
	}
	n = copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func (c *scriptedConn) Close() error { return nil }

func TestGuardedConn(t *testing.T) {
	manyPings := make([][]byte, agentPingBurst+1)
	for i := range manyPings {
		manyPings[i] = frame(framePing, flagSYN, 0, uint32(i), "")
	}
	// A data frame whose body looks like a frame opening a stream.
	synInBody := string(frame(frameWindowUpdate, flagSYN, 2, 0, ""))
	for _, tc := range []struct {
		name   string
		frames []byte
		// wantErr is part of the error; empty when every byte goes through.
		wantErr string
	}{{
		name: "answers on the control plane's streams",
		frames: frames(frame(frameWindowUpdate, flagACK, 1, 0, ""), frame(frameData, 0, 1, 5, "hello"),
			frame(frameData, flagFIN, 1, 0, ""), frame(frameWindowUpdate, 0, 3, 1<<20, ""), frame(frameGoAway, 0, 0, 0, "")),
	}, {
		name:   "a body is not read as frames",
		frames: frames(frame(frameData, 0, 1, uint32(len(synInBody)), synInBody), frame(frameData, 0, 1, 1, "x")),
	}, {
		name:   "pings answered and sent at the agent's pace",
		frames: frames(manyPings[:agentPingBurst]...),
	}, {
		name:   "a ping answer is not a ping",
		frames: frames(frame(framePing, flagACK, 0, 1, ""), frame(framePing, flagACK, 0, 2, ""), frame(framePing, flagACK, 0, 3, ""), frame(framePing, flagACK, 0, 4, ""), frame(framePing, flagACK, 0, 5, ""), frame(framePing, flagACK, 0, 6, ""), frame(framePing, flagACK, 0, 7, ""), frame(framePing, flagACK, 0, 8, ""), frame(framePing, flagACK, 0, 9, "")),
	}, {
		name:    "the agent opens a stream",
		frames:  frames(frame(frameData, 0, 1, 2, "ok"), frame(frameWindowUpdate, flagSYN, 2, 0, "")),
		wantErr: "the agent opened stream 2",
	}, {
		name:    "the agent opens a stream with data",
		frames:  frame(frameData, flagSYN, 4, 3, "abc"),
		wantErr: "the agent opened stream 4",
	}, {
		name:    "a ping flood",
		frames:  frames(manyPings...),
		wantErr: "pings faster than",
	}} {
		// Each byte split: the same frames read whole, byte by byte, and
		// in reads that cut headers and bodies anywhere.
		for _, sizes := range [][]int{nil, slices.Repeat([]int{1}, len(tc.frames)), {5, 13, 7, 2, 30, 11, 3, 12}} {
			c := guard(&scriptedConn{data: tc.frames, sizes: sizes})
			got, err := io.ReadAll(c)
			if tc.wantErr == "" {
				if err != nil || !bytes.Equal(got, tc.frames) {
					t.Errorf("%s (reads %v): read %d of %d bytes, error %v; want all, no error", tc.name, sizes, len(got), len(tc.frames), err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s (reads %v): error %v, want one with %q", tc.name, sizes, err, tc.wantErr)
			}
			// Nothing of the frame that broke the rule reaches the session.
			if bytes.Contains(got, tc.frames[len(tc.frames)-frameHeaderSize:]) {
				t.Errorf("%s (reads %v): the offending frame was handed on", tc.name, sizes)
			}
			if _, again := c.Read(make([]byte, 1)); again == nil {
				t.Errorf("%s (reads %v): a read after the refusal succeeded", tc.name, sizes)
			}
		}
	}
}

// TestGuardBoundsHostileAgent plays an agent that does what costs the
// control plane most, against the control plane's session with and without
// the guard: it opens streams and fills their windows, and it sends pings
// without reading the answers. With the guard the control plane holds
// nothing of it; without, the accept backlog holds 64 MiB and every ping a
// goroutine.
func TestGuardBoundsHostileAgent(t *testing.T) {
	const goal = 4 << 20 // what one agent may make the control plane hold
	const streams, pings = 300, 20_000
	var hostile []byte
	body := strings.Repeat("x", 256<<10) // a new stream's whole window
	for i := range streams {
		id := uint32(2 * (i + 1))
		hostile = append(hostile, frame(frameWindowUpdate, flagSYN, id, 0, "")...)
		hostile = append(hostile, frame(frameData, 0, id, uint32(len(body)), body)...)
	}
	for i := range pings {
		hostile = append(hostile, frame(framePing, flagSYN, 0, uint32(i), "")...)
	}

	// run serves the hostile bytes to a control plane session over a pipe
	// and reports what the control plane holds once they are read.
	run := func(guarded bool) (heap int64, goroutines int, closed bool) {
		runtime.GC()
		before := heapInUse()
		goroutinesBefore := runtime.NumGoroutine()
		agentEnd, cpEnd := net.Pipe()
		conn := cpEnd
		if guarded {
			conn = guard(cpEnd)
		}
		cfg := yamuxConfig()
		cfg.EnableKeepAlive = false
		mux, err := yamux.Client(conn, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = mux.Close(); _ = agentEnd.Close() }()
		// The agent never reads: what the control plane answers waits.
		written := make(chan struct{})
		go func() {
			defer close(written)
			_ = agentEnd.SetWriteDeadline(time.Now().Add(20 * time.Second))
			_, _ = agentEnd.Write(hostile)
		}()
		select {
		case <-written:
		case <-mux.CloseChan():
		case <-time.After(20 * time.Second):
			t.Fatal("the control plane neither read the agent's bytes nor ended the tunnel")
		}
		runtime.GC()
		return heapInUse() - before, runtime.NumGoroutine() - goroutinesBefore, mux.IsClosed()
	}

	heap, goroutines, closed := run(true)
	t.Logf("guarded: the control plane holds %.2f MiB and %d goroutines; the tunnel ended: %v", float64(heap)/(1<<20), goroutines, closed)
	if !closed {
		t.Error("the guarded tunnel lives on after the agent opened streams")
	}
	if heap > goal || goroutines > 10 {
		t.Errorf("the guarded control plane holds %d bytes and %d goroutines of a hostile agent; want at most %d bytes and 10", heap, goroutines, goal)
	}
	heap, goroutines, closed = run(false)
	t.Logf("unguarded: the control plane holds %.2f MiB and %d goroutines; the tunnel ended: %v", float64(heap)/(1<<20), goroutines, closed)
	if heap <= goal {
		t.Errorf("yamux alone held %d bytes of the hostile agent: this test no longer shows what the guard is for", heap)
	}
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
