package clusterstatus

import (
	"sync"
	"time"
)

// failureThreshold remembers since when each cluster fails its probe, so
// that one failed probe of a Ready cluster is not reported as an outage.
type failureThreshold struct {
	threshold time.Duration
	now       func() time.Time

	mu    sync.Mutex
	first map[string]time.Time
}

func newFailureThreshold(threshold time.Duration, now func() time.Time) *failureThreshold {
	return &failureThreshold{threshold: threshold, now: now, first: map[string]time.Time{}}
}

// hold reports whether the stored status of cluster name is kept this
// round: the probe failed, the cluster is reported Ready, and it has been
// failing for less than the threshold. A failed probe starts the failure
// (Ready or not), a ready one ends it.
func (f *failureThreshold) hold(name string, ready, wasReady bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ready {
		delete(f.first, name)
		return false
	}
	first, ok := f.first[name]
	if !ok {
		first = f.now()
		f.first[name] = first
	}
	return wasReady && f.now().Sub(first) < f.threshold
}
