package worker

import (
	"container/heap"

	"k8s.io/client-go/util/workqueue"
)

// NewPriorityQueue is NewQueue whose keys come out highest priority first
// (first in, first out among equals), as Karmada's scheduler serves
// bindings by their schedulePriority. priority is read when a key is
// queued; a key queued again while it waits keeps its place unless its
// priority rose.
func NewPriorityQueue(name string, priority func(key string) int32) workqueue.TypedRateLimitingInterface[string] {
	q := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{Name: name, Queue: newPriorityHeap(priority)})
	delaying := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Name: name, Queue: q})
	return workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name, DelayingQueue: delaying})
}

// priorityHeap implements workqueue.Queue: the workqueue keeps it free of
// duplicates and calls Touch when a waiting key is added again.
type priorityHeap struct {
	priority func(string) int32
	items    []*heapItem
	index    map[string]*heapItem
	seq      uint64
}

type heapItem struct {
	key      string
	priority int32
	seq      uint64
	pos      int
}

func newPriorityHeap(priority func(string) int32) *priorityHeap {
	return &priorityHeap{priority: priority, index: map[string]*heapItem{}}
}

// Push implements workqueue.Queue.
func (h *priorityHeap) Push(key string) {
	h.seq++
	it := &heapItem{key: key, priority: h.priority(key), seq: h.seq}
	h.index[key] = it
	heap.Push((*itemHeap)(h), it)
}

// Touch implements workqueue.Queue: a waiting key whose priority rose
// moves up.
func (h *priorityHeap) Touch(key string) {
	it, ok := h.index[key]
	if !ok {
		return
	}
	if p := h.priority(key); p > it.priority {
		it.priority = p
		heap.Fix((*itemHeap)(h), it.pos)
	}
}

// Len implements workqueue.Queue.
func (h *priorityHeap) Len() int { return len(h.items) }

// Pop implements workqueue.Queue.
func (h *priorityHeap) Pop() string {
	it := heap.Pop((*itemHeap)(h)).(*heapItem)
	delete(h.index, it.key)
	return it.key
}

// itemHeap is the container/heap view of a priorityHeap.
type itemHeap priorityHeap

func (h *itemHeap) Len() int { return len(h.items) }
func (h *itemHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if a.priority != b.priority {
		return a.priority > b.priority
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
