package watchguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"k8s.io/component-base/metrics/testutil"
)

// streamer writes chunks to its client until a write fails or total bytes
// are written, and reports how it ended.
func streamer(timeout time.Duration, chunk, total int, ended chan<- error) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		g := Wrap(w, APIProxy, timeout)
		defer g.Stop()
		w.Header().Set("Content-Type", "application/octet-stream")
		buf := make([]byte, chunk)
		for sent := 0; sent < total; sent += chunk {
			if _, err := g.Write(buf); err != nil {
				ended <- err
				return
			}
			if err := g.FlushError(); err != nil {
				ended <- err
				return
			}
		}
		ended <- nil
	}
}

// cutCount is how many proxy streams were cut off for reason.
func cutCount(t *testing.T, reason string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(cutOffs.WithLabelValues(APIProxy, reason))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitEnded waits for the handler's end, which must come within limit.
func waitEnded(t *testing.T, ended <-chan error, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-ended:
		return err
	case <-time.After(limit):
		t.Fatalf("the handler still writes after %s", limit)
		return nil
	}
}

// TestStalledHTTP1Client: a client on HTTP/1.1 that reads nothing is cut
// off after the timeout, and counted.
func TestStalledHTTP1Client(t *testing.T) {
	ended := make(chan error, 1)
	srv := httptest.NewServer(streamer(300*time.Millisecond, 32<<10, 1<<30, ended))
	defer srv.Close()
	before := cutCount(t, ReasonStalled)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = waitEnded(t, ended, 10*time.Second)
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("the handler ended with %v, want ErrStalled", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("cut off after %s, before the timeout", took)
	}
	if got := cutCount(t, ReasonStalled) - before; got != 1 {
		t.Errorf("counted %v stalled cut-offs, want 1", got)
	}
	// The client, reading at last, finds the stream cut short: no final
	// chunk, the connection closed.
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("the stream of a stalled client ended with %v, want it cut short", err)
	}
}

// TestStalledHTTP2Client: on HTTP/2 the stream, not the connection, is
// reset; another stream of the same connection goes on.
func TestStalledHTTP2Client(t *testing.T) {
	stalled := make(chan error, 1)
	mux := http.NewServeMux()
	mux.Handle("/stall", streamer(300*time.Millisecond, 64<<10, 1<<30, stalled))
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()
	resp, err := client.Get(srv.URL + "/stall")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", resp.Proto)
	}
	if err := waitEnded(t, stalled, 20*time.Second); !errors.Is(err, ErrStalled) {
		t.Fatalf("the handler ended with %v, want ErrStalled", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err == nil {
		t.Error("the stream of a stalled client ended cleanly, want it reset")
	}
	ok, err := client.Get(srv.URL + "/ok")
	if err != nil {
		t.Fatalf("another stream after the reset: %v", err)
	}
	body, _ := io.ReadAll(ok.Body)
	_ = ok.Body.Close()
	if string(body) != "ok" || ok.ProtoMajor != 2 {
		t.Errorf("another stream got %q over %s", body, ok.Proto)
	}
}

// readSlowly reads url to its end, 64 KiB at a time with a pause between
// reads, and returns how many bytes it read.
func readSlowly(t *testing.T, url string, pause time.Duration) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	buf := make([]byte, 64<<10)
	got := 0
	for {
		n, err := resp.Body.Read(buf)
		got += n
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
	}
}

// TestSlowReaderNotCut: a client that reads slowly but steadily is never
// blocked for the timeout, and gets everything.
func TestSlowReaderNotCut(t *testing.T) {
	ended := make(chan error, 1)
	const total = 2 << 20
	srv := httptest.NewServer(streamer(500*time.Millisecond, 16<<10, total, ended))
	defer srv.Close()
	before := cutCount(t, ReasonStalled)
	got := readSlowly(t, srv.URL, 2*time.Millisecond)
	if err := waitEnded(t, ended, 10*time.Second); err != nil {
		t.Errorf("the handler of a slow reader ended with %v", err)
	}
	if got != total {
		t.Errorf("read %d bytes, want %d", got, total)
	}
	if n := cutCount(t, ReasonStalled) - before; n != 0 {
		t.Errorf("counted %v cut-offs of a slow reader", n)
	}
}
