package watchguard

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// upstream plays a proxy copying an upstream stream into a Buffered: it
// writes chunk after chunk (flushing each) until a write fails or total is
// written, and reports the longest a write took and how it ended.
type upstreamResult struct {
	err     error
	slowest time.Duration
	written int
}

func upstream(limit, chunk, total int, stall time.Duration, done chan<- upstreamResult) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		b := Buffer(w, APIProxy, limit, stall)
		var res upstreamResult
		buf := make([]byte, chunk)
		for res.written < total {
			start := time.Now()
			_, err := b.Write(buf)
			if err == nil {
				err = b.FlushError()
			}
			res.slowest = max(res.slowest, time.Since(start))
			if err != nil {
				res.err = err
				break
			}
			res.written += chunk
		}
		if err := b.Close(); res.err == nil {
			res.err = err
		}
		done <- res
	}
}

// TestBufferedStalledClient: the upstream is read at full speed while a
// client reads nothing, until the buffer is full; NoProgress later the
// stream is cut off (and counted), well before the stall timeout.
func TestBufferedStalledClient(t *testing.T) {
	done := make(chan upstreamResult, 1)
	srv := httptest.NewServer(upstream(1<<20, 16<<10, 1<<30, time.Minute, done))
	defer srv.Close()
	before := cutCount(t, ReasonBuffer)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	var res upstreamResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream is still held after 10 s (the stall timeout is a minute)")
	}
	if !errors.Is(res.err, ErrBehind) {
		t.Errorf("the stream ended with %v, want ErrBehind", res.err)
	}
	if res.slowest > NoProgress+time.Second {
		t.Errorf("a write of the upstream took %s: the client held it back past NoProgress", res.slowest)
	}
	if got := cutCount(t, ReasonBuffer) - before; got != 1 {
		t.Errorf("counted %v buffer cut-offs, want 1", got)
	}
}

// TestBufferedSlowReader: a client that reads slowly but keeps up within
// the buffer gets every byte, in order, and the stream ends cleanly.
func TestBufferedSlowReader(t *testing.T) {
	done := make(chan upstreamResult, 1)
	const total = 2 << 20
	srv := httptest.NewServer(upstream(1<<20, 16<<10, total, time.Second, done))
	defer srv.Close()
	got := readSlowly(t, srv.URL, time.Millisecond)
	res := <-done
	if res.err != nil || res.written != total || got != total {
		t.Errorf("upstream %+v, client read %d of %d", res, got, total)
	}
}
