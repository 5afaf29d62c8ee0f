package worker

import (
	"container/heap"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// NewQueue returns the rate-limited queue of a controller whose keys are
// "namespace/name": they come out fairly by namespace (fairHeap), so a
// burst of new objects in one namespace does not hold back a change in
// another.
func NewQueue(name string) *Queue {
	return NewFairQueue(name, Namespace)
}

// NewFairQueue is NewQueue with flow saying which flow (namespace) a key
// is fair within.
func NewFairQueue(name string, flow func(key string) string) *Queue {
	return newQueue(name, newFairHeap(flow, func(string) int32 { return 0 }, time.Now))
}

// NewPriorityQueue is NewQueue whose keys come out highest priority first
// (fairly by namespace among equals), as Karmada's scheduler serves
// bindings by their schedulePriority. priority is read when a key is
// queued; a key queued again while it waits keeps its place unless its
// priority rose.
func NewPriorityQueue(name string, priority func(key string) int32) *Queue {
	return newQueue(name, newFairHeap(Namespace, priority, time.Now))
}

// Interface is what controllers use of a Queue (tests give a double).
type Interface interface {
	workqueue.TypedRateLimitingInterface[string]
	AddInitial(key string)
}

// Queue is a controller's rate-limited queue (NewQueue), which also takes
// keys of the objects an informer met in its initial list (AddInitial).
type Queue struct {
	workqueue.TypedRateLimitingInterface[string]
	heap *fairHeap
}

// AddInitial queues key, of an object met in an informer's initial list,
// behind every key queued otherwise (among themselves by priority, then
// fairly). A controller starting (a new leader after a takeover, a
// restart) goes over every object once, mostly to find nothing to do; a
// change made meanwhile is served first. Added again by a change while it
// waits, the key is served as the others.
func (q *Queue) AddInitial(key string) {
	q.heap.markInitial(key)
	q.Add(key)
}

func newQueue(name string, h *fairHeap) *Queue {
	registerAge(name, h)
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, Queue: h})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, Queue: q})
	return &Queue{heap: h, TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, DelayingQueue: delaying})}
}

// Namespace is the namespace of a "namespace/name" key; "" for a key
// without "/" (a cluster-scoped object's).
func Namespace(key string) string {
	ns, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	return ns
}

// fairHeap implements workqueue.Queue (the workqueue keeps it free of
// duplicates and calls Touch when a waiting key is added again) as
// start-time fair queuing over the keys' namespaces: a key queued for a
// namespace is tagged one past the later of the namespace's last tag and
// the tag last served, and keys come out by priority, then tag, then the
// order they were queued in. A namespace that queues a thousand keys at
// once gets tags far ahead; one that queues a key later is served next to
// the burst, not after it.
type fairHeap struct {
	mu       sync.Mutex
	flow     func(string) string
	priority func(string) int32
	now      func() time.Time
	items    []*heapItem
	index    map[string]*heapItem
	// served is the tag of the key last popped; last the last tag given
	// per namespace with keys waiting, waiting how many.
	served  uint64
	seq     uint64
	last    map[string]uint64
	waiting map[string]int
	// initial are the keys AddInitial marked, until they are pushed.
	initial map[string]struct{}
}

type heapItem struct {
	key, namespace string
	priority       int32
	// initial: queued by AddInitial, served after every other key.
	initial  bool
	tag, seq uint64
	queued   time.Time
	pos      int
}

func newFairHeap(flow func(string) string, priority func(string) int32, now func() time.Time) *fairHeap {
	return &fairHeap{flow: flow, priority: priority, now: now, index: map[string]*heapItem{}, last: map[string]uint64{}, waiting: map[string]int{},
		initial: map[string]struct{}{}}
}

// markInitial makes key's next push an initial one (Queue.AddInitial).
func (h *fairHeap) markInitial(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.initial[key] = struct{}{}
}

// initialFlow prefixes the flow of an initial key; no namespace has it.
const initialFlow = "\x00initial/"

// takeInitial tells whether key was marked initial, clearing the mark.
func (h *fairHeap) takeInitial(key string) bool {
	_, ok := h.initial[key]
	delete(h.initial, key)
	return ok
}

// Push implements workqueue.Queue.
func (h *fairHeap) Push(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ns, initial := h.flow(key), h.takeInitial(key)
	if initial {
		// Fair among themselves: a namespace's initial keys do not push
		// back the tags of its other keys.
		ns = initialFlow + ns
	}
	tag := max(h.served, h.last[ns]) + 1
	h.last[ns] = tag
	h.waiting[ns]++
	h.seq++
	it := &heapItem{key: key, namespace: ns, priority: h.priority(key), initial: initial, tag: tag, seq: h.seq, queued: h.now()}
	h.index[key] = it
	heap.Push((*itemHeap)(h), it)
}

// Touch implements workqueue.Queue: a waiting key whose priority rose
// moves up.
func (h *fairHeap) Touch(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	it, ok := h.index[key]
	if !ok {
		return
	}
	if h.takeInitial(key) {
		// Listed again: it keeps its place.
		return
	}
	if p := h.priority(key); p > it.priority || it.initial {
		// Changed: no longer an initial key, and maybe of a higher
		// priority.
		it.priority, it.initial = max(p, it.priority), false
		heap.Fix((*itemHeap)(h), it.pos)
	}
}

// Len implements workqueue.Queue.
func (h *fairHeap) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.items)
}

// Pop implements workqueue.Queue.
func (h *fairHeap) Pop() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	it := heap.Pop((*itemHeap)(h)).(*heapItem)
	delete(h.index, it.key)
	h.served = max(h.served, it.tag)
	if h.waiting[it.namespace]--; h.waiting[it.namespace] == 0 {
		// Nothing waits: its next key is tagged from served.
		delete(h.waiting, it.namespace)
		delete(h.last, it.namespace)
	}
	return it.key
}

// oldest is how long the longest-waiting key has waited (0: none waits).
func (h *fairHeap) oldest() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var first time.Time
	for _, it := range h.items {
		if first.IsZero() || it.queued.Before(first) {
			first = it.queued
		}
	}
	if first.IsZero() {
		return 0
	}
	return h.now().Sub(first)
}

// itemHeap is the container/heap view of a fairHeap (its lock held).
type itemHeap fairHeap

func (h *itemHeap) Len() int { return len(h.items) }
func (h *itemHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.initial != b.initial {
		return !a.initial
	}
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.tag != b.tag {
		return a.tag < b.tag
	}
	return a.seq < b.seq
}
func (h *itemHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].pos, h.items[j].pos = i, j
}
func (h *itemHeap) Push(x any) {
	it := x.(*heapItem)
	it.pos = len(h.items)
	h.items = append(h.items, it)
}
func (h *itemHeap) Pop() any {
	n := len(h.items)
	it := h.items[n-1]
	h.items[n-1] = nil
	h.items = h.items[:n-1]
	return it
}
