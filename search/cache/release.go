package cache

import (
	"runtime/debug"
	"sync"
	"time"
)

// bulkList is how many objects make a store big: after its first list,
// or once it is stopped, the memory freed is handed back to the system.
const bulkList = 5000

// releaseDelay gathers the first lists of stores that finish together
// (every cluster of a new registry) into one release.
const releaseDelay = 5 * time.Second

// releaser returns freed memory to the operating system once after bulk
// loads and after big stores stop (a registry deleted, a cluster gone). A first list decodes every object of a member page by page; the
// garbage is collected, but the runtime keeps the pages it used for
// minutes before the background scavenger returns them, so the resident
// size would stay at the peak of the load long after it.
type releaser struct {
	mu      sync.Mutex
	pending bool
	// free (debug.FreeOSMemory when nil) and delay (releaseDelay when
	// zero) are what a test changes.
	free  func()
	delay time.Duration
}

// request schedules a release (one for a burst of requests).
func (r *releaser) request() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending {
		return
	}
	r.pending = true
	delay := r.delay
	if delay == 0 {
		delay = releaseDelay
	}
	time.AfterFunc(delay, func() {
		r.mu.Lock()
		r.pending = false
		free := r.free
		r.mu.Unlock()
		if free == nil {
			free = debug.FreeOSMemory
		}
		free()
	})
}
