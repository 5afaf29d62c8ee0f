// Package ownwrites remembers a controller's last write of each object
// until its informer shows it. A controller that decides on the cached
// copy while its own write is still on the way either writes the same
// thing again or sends a write that conflicts; with Pending it decides on
// what it wrote instead, or waits.
package ownwrites

import (
	"strconv"
	"sync"
)

// Writes holds, per key, the last write: the resourceVersion it replaced
// and what the controller wants to remember of it. It is safe for
// concurrent use.
type Writes[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]entry[V]
}

type entry[V any] struct {
	replaced, produced string
	value              V
}

// Record remembers a write of key that replaced resourceVersion replaced.
func (w *Writes[K, V]) Record(key K, replaced string, value V) {
	w.RecordWrite(key, replaced, "", value)
}

// RecordWrite remembers a write of key that replaced resourceVersion
// replaced and produced resourceVersion produced. A write that does not
// send the version it replaced (a patch without resourceVersion) may land
// over a version the cache has not seen yet: the cache then moves to that
// version before it shows the write, and with produced the record is kept
// while the cache holds an older version than the write's.
func (w *Writes[K, V]) RecordWrite(key K, replaced, produced string, value V) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[K]entry[V]{}
	}
	w.m[key] = entry[V]{replaced: replaced, produced: produced, value: value}
}

// Pending returns what was recorded for key when the cache still holds
// cachedRV, the version that write replaced, or a version older than the
// one it produced (compared as integers, as client-go's mutation cache
// compares the versions of etcd-backed servers). Once the cache has moved
// on, the record is dropped and ok is false.
func (w *Writes[K, V]) Pending(key K, cachedRV string) (value V, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, found := w.m[key]
	if !found {
		return value, false
	}
	if e.replaced != cachedRV && !older(cachedRV, e.produced) {
		delete(w.m, key)
		return value, false
	}
	return e.value, true
}

// older tells whether resourceVersion a is older than b, both integers.
func older(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x < y
}

// Forget drops the record of key.
func (w *Writes[K, V]) Forget(key K) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}
