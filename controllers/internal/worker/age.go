package worker

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// ageDesc is the age of the longest-waiting key of each controller's
// queue: what a key queued behind a burst waits now, where the
// workqueue's own queue_duration_seconds says only what finished keys
// waited.
var ageDesc = metrics.NewDesc("flotilla_workqueue_oldest_item_age_seconds",
	"How long the key that has waited longest in a controller's queue has waited, by queue (0: none waits).",
	[]string{"name"}, nil, metrics.ALPHA, "")

// ages are the queues of the process by name; a controller started again
// (a lease won again) replaces its queue.
type ages struct {
	metrics.BaseStableCollector
	mu     sync.Mutex
	queues map[string]*fairHeap
}

var queueAges = &ages{queues: map[string]*fairHeap{}}

func init() { legacyregistry.CustomMustRegister(queueAges) }

func registerAge(name string, h *fairHeap) {
	if name == "" {
		return
	}
	queueAges.mu.Lock()
	defer queueAges.mu.Unlock()
	queueAges.queues[name] = h
}

// DescribeWithStability implements metrics.StableCollector.
func (a *ages) DescribeWithStability(ch chan<- *metrics.Desc) { ch <- ageDesc }

// CollectWithStability implements metrics.StableCollector.
func (a *ages) CollectWithStability(ch chan<- metrics.Metric) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, h := range a.queues {
		ch <- metrics.NewLazyConstMetric(ageDesc, metrics.GaugeValue, h.oldest().Seconds(), name)
	}
}
