package watchguard

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"k8s.io/klog/v2"
)

// DefaultBuffer is how much of a proxied stream the server holds for a
// client ahead of what it has read.
const DefaultBuffer = 4 << 20

// NoProgress is how long a full buffer may wait on a client that reads
// nothing before the client is cut off.
const NoProgress = time.Second

// ErrBehind is the error of a write to a Buffered whose client fell
// further behind than its buffer.
var ErrBehind = errors.New("the client fell further behind than the stream's buffer")

// Buffered is an http.ResponseWriter for a proxied stream (a watch or a
// log follow through clusters/{name}/proxy) that decouples the upstream
// from the client: the proxy's writes go into a buffer, which a goroutine
// of its own writes to the client (through a Writer, so a client that
// stops reading is still cut off after the stall timeout). The proxy so
// keeps reading the member: a slow client never holds back the member's
// watch cache, which would delay that resource's changes for every other
// watcher. When the buffer is full, a write waits for the client to read
// (a slow client slows the stream, as it would the member's own); if the
// client reads nothing for NoProgress meanwhile, the write fails (the
// proxy aborts the stream) and the client is cut off.
type Buffered struct {
	header http.Header
	out    *Writer
	api    string
	limit  int

	mu     sync.Mutex
	wake   *sync.Cond
	chunks [][]byte
	// size is what the client has not been sent yet: queued, and taken
	// by the goroutine but not written.
	size    int
	started bool
	// progress is when a write to the client last completed.
	progress time.Time
	flush    bool
	ended    bool // the handler is done: write what is left, then stop
	err      error
	drained  chan struct{}
}

// Buffer wraps w, a proxied stream of api, with a buffer of limit bytes
// (DefaultBuffer unless > 0) and the stall timeout (StallTimeout unless
// > 0). The handler must call Close before it returns.
func Buffer(w http.ResponseWriter, api string, limit int, stall time.Duration) *Buffered {
	if limit <= 0 {
		limit = DefaultBuffer
	}
	b := &Buffered{header: w.Header(), out: Wrap(w, api, stall), api: api, limit: limit, drained: make(chan struct{}), progress: time.Now()}
	b.wake = sync.NewCond(&b.mu)
	return b
}

// Header is the wrapped writer's.
func (b *Buffered) Header() http.Header { return b.header }

// WriteHeader starts the response at once (before any body) and the
// goroutine that writes the body.
func (b *Buffered) WriteHeader(code int) {
	b.out.WriteHeader(code)
	go b.run()
	b.mu.Lock()
	b.started = true
	b.mu.Unlock()
}

// Write queues p for the client; it fails once the client is cut off.
func (b *Buffered) Write(p []byte) (int, error) {
	b.mu.Lock()
	if !b.started {
		b.mu.Unlock()
		b.WriteHeader(http.StatusOK)
		b.mu.Lock()
	}
	defer b.mu.Unlock()
	for b.err == nil && b.size > 0 && b.size+len(p) > b.limit {
		if time.Since(b.progress) > NoProgress {
			b.err = ErrBehind
			CountCutOff(b.api, ReasonBuffer)
			klog.V(2).InfoS("Cut off a stream whose client read nothing while its buffer was full", "api", b.api, "buffer", b.limit)
			b.wake.Broadcast()
			go b.out.cut() // the goroutine's blocked write fails now
			break
		}
		b.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		b.mu.Lock()
	}
	if b.err != nil {
		return 0, b.err
	}
	b.chunks = append(b.chunks, append([]byte(nil), p...))
	b.size += len(p)
	b.wake.Broadcast()
	return len(p), nil
}

// Flush asks for what is queued to be sent on.
func (b *Buffered) Flush() { _ = b.FlushError() }

// FlushError is Flush with the stream's error, as http.ResponseController
// uses it.
func (b *Buffered) FlushError() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flush = true
	b.wake.Broadcast()
	return b.err
}

// Close writes what is left (bounded by the stall timeout) and stops the
// goroutine; the handler calls it before it returns.
func (b *Buffered) Close() error {
	b.mu.Lock()
	started := b.started
	b.ended = true
	b.wake.Broadcast()
	b.mu.Unlock()
	if started {
		<-b.drained
	}
	b.out.Stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// run writes the queued chunks to the client, flushing after each batch.
func (b *Buffered) run() {
	defer close(b.drained)
	for {
		b.mu.Lock()
		for len(b.chunks) == 0 && !b.flush && !b.ended && b.err == nil {
			b.wake.Wait()
		}
		chunks, flush, ended, failed := b.chunks, b.flush, b.ended, b.err != nil
		b.chunks, b.flush = nil, false
		b.mu.Unlock()
		if failed {
			return
		}
		for _, c := range chunks {
			if _, err := b.out.Write(c); err != nil {
				b.fail(err)
				return
			}
			b.mu.Lock()
			b.size -= len(c)
			b.progress = time.Now()
			b.mu.Unlock()
		}
		if flush || len(chunks) > 0 {
			if err := b.out.FlushError(); err != nil {
				b.fail(err)
				return
			}
		}
		if ended {
			b.mu.Lock()
			left := len(b.chunks)
			b.mu.Unlock()
			if left == 0 {
				return
			}
		}
	}
}

func (b *Buffered) fail(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
	b.wake.Broadcast()
}
