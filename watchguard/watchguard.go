// Package watchguard cuts off a streaming client that stops reading: a
// watch or a log follow served by flotilla-apiserver (through
// clusters/{name}/proxy or search) whose client holds the stream open but
// reads nothing would otherwise hold its handler, its buffers and the
// member's watch behind it for as long as the connection lives.
//
// Writer arms a write deadline on the client's connection (HTTP/1.1) or
// stream (HTTP/2) around each write and flush: one that cannot complete
// within the timeout fails, the handler returns, and the stream is reset.
// Cut-offs are counted in flotilla_watch_cutoffs_total by API and reason.
package watchguard

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
)

// StallTimeout is how long one write to a streaming client may block: a
// client that has read nothing of what is pending for this long is cut
// off. The kernel's socket buffers and HTTP/2 flow-control windows hold
// what was written before, so a client that only reads slowly is not.
const StallTimeout = 10 * time.Second

// The APIs whose streams are guarded (the "api" label).
const (
	APIProxy  = "proxy"
	APISearch = "search"
)

// The reasons of a cut-off (the "reason" label).
const (
	// ReasonStalled: a write blocked for StallTimeout.
	ReasonStalled = "stalled"
	// ReasonBehind: the client read too slowly for the changes it
	// watches and fell further behind than the server buffers for it.
	ReasonBehind = "behind"
	// ReasonBuffer: a proxied stream's client read nothing for NoProgress
	// while the stream's buffer was full (Buffered).
	ReasonBuffer = "buffer"
)

var cutOffs = metrics.NewCounterVec(&metrics.CounterOpts{
	Namespace: "flotilla", Name: "watch_cutoffs_total",
	Help:           "Streams (watches, log follows) flotilla-apiserver cut off because their client stopped reading (stalled), fell behind the changes buffered for it (behind) or left a proxied stream's buffer full (buffer), by API (proxy, search).",
	StabilityLevel: metrics.ALPHA,
}, []string{"api", "reason"})

func init() {
	legacyregistry.MustRegister(cutOffs)
	for _, api := range []string{APIProxy, APISearch} {
		for _, r := range []string{ReasonStalled, ReasonBehind, ReasonBuffer} {
			cutOffs.WithLabelValues(api, r)
		}
	}
}

// CountCutOff counts a stream of api cut off for reason.
func CountCutOff(api, reason string) { cutOffs.WithLabelValues(api, reason).Inc() }

// Writer is an http.ResponseWriter whose writes and flushes fail once
// they block longer than its timeout: a timer runs while one is in
// progress, and when it fires the connection's (HTTP/1.1) or the stream's
// (HTTP/2) write deadline is set in the past, which fails the blocked
// write and resets the stream. Handlers that hijack the connection
// (upgrades) must be given the original writer. A Writer is used by one
// handler goroutine.
type Writer struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	api     string
	timer   *time.Timer
	stalled atomic.Bool
	counted bool // the cut-off is counted (by the handler's goroutine)
}

// Wrap guards w, a stream of api, with timeout (StallTimeout unless > 0).
func Wrap(w http.ResponseWriter, api string, timeout time.Duration) *Writer {
	if timeout <= 0 {
		timeout = StallTimeout
	}
	g := &Writer{ResponseWriter: w, rc: http.NewResponseController(w), timeout: timeout, api: api}
	g.timer = time.AfterFunc(time.Hour, g.cut)
	g.timer.Stop()
	return g
}

// Write writes p within the timeout.
func (w *Writer) Write(p []byte) (int, error) {
	w.timer.Reset(w.timeout)
	n, err := w.ResponseWriter.Write(p)
	w.timer.Stop()
	return n, w.result(err)
}

// Flush sends what is buffered within the timeout (http.Flusher).
func (w *Writer) Flush() { _ = w.FlushError() }

// FlushError is Flush with its error, as http.ResponseController uses it.
func (w *Writer) FlushError() error {
	w.timer.Reset(w.timeout)
	err := w.rc.Flush()
	w.timer.Stop()
	return w.result(err)
}

// Unwrap gives http.ResponseController the wrapped writer.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Stalled tells whether the stream was cut off because a write blocked.
func (w *Writer) Stalled() bool { return w.stalled.Load() }

// Stop releases the timer; the handler calls it when it returns. A cut-off
// whose write completed all the same is counted here.
func (w *Writer) Stop() {
	w.timer.Stop()
	if w.stalled.Load() {
		w.count()
	}
}

// count counts the cut-off once.
func (w *Writer) count() {
	if !w.counted {
		w.counted = true
		CountCutOff(w.api, ReasonStalled)
	}
}

// cut ends a write blocked for the timeout: a deadline in the past fails
// it. A connection that takes no deadline (a test recorder) is left as is.
func (w *Writer) cut() {
	if err := w.rc.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		return
	}
	if w.stalled.CompareAndSwap(false, true) {
		klog.V(2).InfoS("Cut off a stream whose client stopped reading", "api", w.api, "timeout", w.timeout)
	}
}

// result is err, or, for a write the timer cut off, an error saying so.
// The cut-off is counted here, in the handler's goroutine, so that it is
// counted before the handler learns of it.
func (w *Writer) result(err error) error {
	if err != nil && w.stalled.Load() {
		w.count()
		return fmt.Errorf("%w: %v", ErrStalled, err)
	}
	return err
}

// ErrStalled is the error of a write cut off because the client read
// nothing for the timeout.
var ErrStalled = errors.New("the client read nothing of the stream for too long")
