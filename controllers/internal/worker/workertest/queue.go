// Package workertest holds the controllers' test double of their work
// queue.
package workertest

import (
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// Delayed is a key added with AddAfter, and its delay.
type Delayed struct {
	Key   string
	Delay time.Duration
}

// Queue is a controller's queue that records the delayed adds instead of
// arming timers; every other call goes to the embedded queue.
type Queue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	after []Delayed
}

// AddAfter records key and d.
func (q *Queue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.after = append(q.after, Delayed{key, d})
}

// AddInitial adds key as Add does: the test double has no order.
func (q *Queue) AddInitial(key string) { q.Add(key) }

// Delayed returns the delayed adds since the last call, and forgets them.
func (q *Queue) Delayed() []Delayed {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.after
	q.after = nil
	return out
}

// Keys drains the keys queued at once.
func (q *Queue) Keys() []string {
	var out []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		out = append(out, k)
	}
	return out
}
