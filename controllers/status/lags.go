package status

import (
	"sync"
	"time"
)

// Works report late when the execution controller is behind (a burst of
// new templates): waiting the fixed workReportGrace then writes a
// binding's status before its Works report, and again after. reportLags
// keeps, per cluster, the longest time a Work took from its creation to
// its first Applied report within the last lagMemory, and the wait for a
// Work to that cluster is half as long again, between workReportGrace and
// maxWorkReportGrace.
type reportLags struct {
	mu        sync.Mutex
	byCluster map[string]lagSample
}

type lagSample struct {
	lag time.Duration
	at  time.Time
}

const (
	// lagMemory is how long an observed lag counts.
	lagMemory = 2 * time.Minute
	// maxWorkReportGrace bounds the wait however late Works report.
	maxWorkReportGrace = 2 * time.Minute
)

func newReportLags() *reportLags { return &reportLags{byCluster: map[string]lagSample{}} }

// observe records that a Work to cluster reported lag after its creation.
func (r *reportLags) observe(cluster string, lag time.Duration, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byCluster[cluster]
	if !ok || lag >= s.lag || now.Sub(s.at) > lagMemory {
		r.byCluster[cluster] = lagSample{lag: lag, at: now}
	}
}

// grace is how long a Work to cluster may go without reporting before
// the binding's status is written without it.
func (r *reportLags) grace(cluster string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.byCluster[cluster]
	if !ok || now.Sub(s.at) > lagMemory {
		return workReportGrace
	}
	return min(max(workReportGrace, s.lag*3/2), maxWorkReportGrace)
}
