package cache

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// ringSize and ringAge bound the recent changes a store keeps for watches
// resuming from a resourceVersion: at most ringSize changes, none older
// than ringAge. Older ones answer 410 Gone and the client lists again, as
// with the API server's watch cache (which keeps 75 s of changes). Without
// the age bound a store of a slowly changing resource would go on holding
// more old versions of its objects for as long as it takes to make 4,096
// changes.
const (
	ringSize = 4096
	ringAge  = 2 * time.Minute
)

// WatcherBuffer is how many changes a slow watch may lag behind before the
// store closes it (the client watches again from its last resourceVersion).
const WatcherBuffer = 1024

// ErrTooOld is returned when a watch asks for changes older than the store
// keeps.
var ErrTooOld = errors.New("too old resource version")

// entry is one cached object.
type entry struct {
	rv   uint64
	data []byte // compressed JSON, see codec.go
}

// Event is one change of a cached object, as a watch delivers it.
type Event struct {
	Type watch.EventType
	// Key is "namespace/name", or "name" for cluster-scoped objects.
	Key string
	RV  uint64
	// data is the compressed object after the change (before it, for deletions).
	data []byte
}

// change is a kept change and when the store saw it.
type change struct {
	Event
	at time.Time
}

// Store is the cache of one resource in one member cluster. Reads are
// served from memory; the member is never asked on behalf of a reader.
type Store struct {
	Cluster    string
	Resource   schema.GroupVersionResource
	Kind       string
	Namespaced bool

	mu     sync.RWMutex
	codec  *codec
	items  map[string]entry
	sorted []string // keys in order; nil when stale
	rv     uint64   // the member's resourceVersion the store is at
	synced bool

	ring      []change // the kept changes from ringHead on, oldest first
	ringHead  int
	ringSince uint64           // changes after this RV are all in the ring
	now       func() time.Time // the clock of ringAge; tests set it

	watchers map[*Watcher]struct{}
	stopped  bool
}

func newStore(cluster string, gvr schema.GroupVersionResource, kind string, namespaced bool) *Store {
	return &Store{
		Cluster: cluster, Resource: gvr, Kind: kind, Namespaced: namespaced,
		items: map[string]entry{}, watchers: map[*Watcher]struct{}{}, now: time.Now,
	}
}

// Key returns the store key of an object.
func Key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// SplitKey returns the namespace and name of a store key.
func SplitKey(key string) (namespace, name string) {
	if ns, n, ok := strings.Cut(key, "/"); ok {
		return ns, n
	}
	return "", key
}

// Synced says whether the store has listed the member once.
func (s *Store) Synced() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.synced
}

// Len is the number of cached objects.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// RV is the member resourceVersion the store is at.
func (s *Store) RV() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Decode appends the JSON of a cached object or event to dst.
func (s *Store) Decode(dst, data []byte) ([]byte, error) {
	s.mu.RLock()
	c := s.codec
	s.mu.RUnlock()
	return c.decompress(dst, data)
}

// Item is a cached object as a read returns it.
type Item struct {
	Key  string
	RV   uint64
	Data []byte // compressed; Store.Decode returns its JSON
}

// Get returns the object with the given key.
func (s *Store) Get(key string) (Item, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.items[key]
	if !ok {
		return Item{}, false
	}
	return Item{Key: key, RV: e.rv, Data: e.data}, true
}

// List returns, in key order, up to limit objects (0: all) of namespace
// ("" for all namespaces) whose key is after the key "after", for which
// keep (if set) is true, with the RV the store was at and whether more
// objects follow.
func (s *Store) List(namespace, after string, limit int, keep func(key string) bool) (items []Item, rv uint64, more bool) {
	s.mu.Lock()
	if s.sorted == nil {
		s.sorted = make([]string, 0, len(s.items))
		for k := range s.items {
			s.sorted = append(s.sorted, k)
		}
		slices.Sort(s.sorted)
	}
	keys, rv := s.sorted, s.rv
	prefix := ""
	if namespace != "" && s.Namespaced {
		prefix = namespace + "/"
	}
	start := 0
	if prefix != "" {
		start, _ = slices.BinarySearch(keys, prefix)
	}
	if after != "" {
		i, found := slices.BinarySearch(keys, after)
		if found {
			i++
		}
		start = max(start, i)
	}
	for _, k := range keys[start:] {
		if prefix != "" && !strings.HasPrefix(k, prefix) {
			break
		}
		if keep != nil && !keep(k) {
			continue
		}
		if limit > 0 && len(items) == limit {
			more = true
			break
		}
		e := s.items[k]
		items = append(items, Item{Key: k, RV: e.rv, Data: e.data})
	}
	s.mu.Unlock()
	return items, rv, more
}

// Namespaces returns the namespaces holding cached objects.
func (s *Store) Namespaces() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[string]struct{}{}
	for k := range s.items {
		if ns, _ := SplitKey(k); ns != "" {
			seen[ns] = struct{}{}
		}
	}
	out := make([]string, 0, len(seen))
	for ns := range seen {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}

// apply records one change seen on the member.
func (s *Store) apply(typ watch.EventType, key string, rv uint64, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	old, had := s.items[key]
	switch typ {
	case watch.Deleted:
		if !had {
			s.setRV(rv)
			return
		}
		delete(s.items, key)
		s.sorted = nil
		if data == nil {
			data = old.data
		}
	default:
		if had {
			typ = watch.Modified
		} else {
			typ = watch.Added
			s.sorted = nil
		}
		s.items[key] = entry{rv: rv, data: data}
	}
	s.setRV(rv)
	s.record(Event{Type: typ, Key: key, RV: rv, data: data})
}

// bookmark moves the store's resourceVersion without a change.
func (s *Store) bookmark(rv uint64) {
	s.mu.Lock()
	s.setRV(rv)
	s.mu.Unlock()
}

func (s *Store) setRV(rv uint64) {
	if rv > s.rv {
		s.rv = rv
	}
}

// replace swaps in the result of a full list at rv, recording the
// differences as changes so that watches stay consistent; it returns the
// keys no longer there.
func (s *Store) replace(items map[string]entry, rv uint64, c *codec) (gone []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	if s.codec == nil {
		s.codec = c
	}
	first := !s.synced
	for k, old := range s.items {
		if _, ok := items[k]; !ok {
			s.record(Event{Type: watch.Deleted, Key: k, RV: rv, data: old.data})
			gone = append(gone, k)
		}
	}
	for k, e := range items {
		old, ok := s.items[k]
		switch {
		case !ok:
			s.record(Event{Type: watch.Added, Key: k, RV: e.rv, data: e.data})
		case old.rv != e.rv:
			s.record(Event{Type: watch.Modified, Key: k, RV: e.rv, data: e.data})
		}
	}
	s.items, s.sorted, s.synced = items, nil, true
	s.setRV(rv)
	if first {
		// Watches start from the first list; nothing before it is known.
		clear(s.ring)
		s.ring, s.ringHead, s.ringSince = s.ring[:0], 0, rv
	}
	return gone
}

// record appends a change to the ring and hands it to the watches.
func (s *Store) record(ev Event) {
	now := s.now()
	s.trim(now, ringSize-1)
	s.ring = append(s.ring, change{Event: ev, at: now})
	for w := range s.watchers {
		select {
		case w.ch <- ev:
		default:
			// Too slow: close it rather than block the member's watch.
			delete(s.watchers, w)
			w.behind.Store(true)
			w.stop()
		}
	}
}

// trim drops the kept changes older than ringAge and the oldest beyond
// keep, releasing their data; a watch from before them is then too old.
func (s *Store) trim(now time.Time, keep int) {
	for s.ringHead < len(s.ring) {
		c := &s.ring[s.ringHead]
		if len(s.ring)-s.ringHead <= keep && now.Sub(c.at) <= ringAge {
			break
		}
		s.ringSince = max(s.ringSince, c.RV)
		*c = change{}
		s.ringHead++
	}
	// Move the kept changes down once the dropped ones are half the slice,
	// so that it stays within twice ringSize.
	if s.ringHead > 0 && s.ringHead >= len(s.ring)/2 {
		n := copy(s.ring, s.ring[s.ringHead:])
		clear(s.ring[n:])
		s.ring, s.ringHead = s.ring[:n], 0
	}
}

// Watcher receives the changes of one store.
type Watcher struct {
	// Initial are the changes to deliver before those on C.
	Initial []Event
	ch      chan Event
	done    chan struct{}
	once    sync.Once
	store   *Store
	// behind: the store closed the watch because it fell WatcherBuffer
	// changes behind.
	behind atomic.Bool
}

// C delivers changes after Initial; it is never closed, Done is.
func (w *Watcher) C() <-chan Event { return w.ch }

// Done is closed when the watch ends (store stopped or watcher too slow).
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Behind tells, once Done is closed, whether the watch ended because its
// reader fell WatcherBuffer changes behind.
func (w *Watcher) Behind() bool { return w.behind.Load() }

func (w *Watcher) stop() { w.once.Do(func() { close(w.done) }) }

// Stop ends the watch.
func (w *Watcher) Stop() {
	s := w.store
	s.mu.Lock()
	delete(s.watchers, w)
	s.mu.Unlock()
	w.stop()
}

// Watch returns the changes after rv. With all set (a watch from
// resourceVersion "" or "0"), the current objects come first as additions.
// It returns ErrTooOld when the changes after rv are no longer kept.
func (s *Store) Watch(rv uint64, all bool) (*Watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &Watcher{ch: make(chan Event, WatcherBuffer), done: make(chan struct{}), store: s}
	if s.stopped {
		w.stop()
		return w, nil
	}
	switch {
	case all:
		w.Initial = make([]Event, 0, len(s.items))
		for k, e := range s.items {
			w.Initial = append(w.Initial, Event{Type: watch.Added, Key: k, RV: e.rv, data: e.data})
		}
		slices.SortFunc(w.Initial, func(a, b Event) int { return cmp.Compare(a.RV, b.RV) })
	default:
		if s.trim(s.now(), ringSize); rv < s.ringSince {
			return nil, ErrTooOld
		}
		w.Initial = s.since(rv)
	}
	s.watchers[w] = struct{}{}
	return w, nil
}

// since returns the kept changes after rv, oldest first.
func (s *Store) since(rv uint64) []Event {
	var out []Event
	for _, c := range s.ring[s.ringHead:] {
		if c.RV > rv {
			out = append(out, c.Event)
		}
	}
	return out
}

// Data returns the compressed object of an event.
func (e Event) Data() []byte { return e.data }

// stop ends every watch and drops the objects.
func (s *Store) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for w := range s.watchers {
		w.stop()
	}
	s.watchers, s.items, s.sorted, s.ring = nil, nil, nil, nil
}

// ApplyStatic records a change of obj in a store NewStaticStore made, as
// the member's watch would deliver it; readers' tests drive watches with it.
func (s *Store) ApplyStatic(typ watch.EventType, obj *unstructured.Unstructured) error {
	raw, err := compactJSON(obj.DeepCopy(), searchv1alpha1.CachedFromClusterAnnotation, s.Cluster)
	if err != nil {
		return err
	}
	s.apply(typ, Key(obj.GetNamespace(), obj.GetName()), parseRV(obj.GetResourceVersion()), s.codec.compress(raw))
	return nil
}

// NewStaticStore returns a synced store holding objs, as if listed from
// the member at rv; it is what readers are tested against.
func NewStaticStore(cluster string, gvr schema.GroupVersionResource, kind string, namespaced bool, rv uint64, objs []*unstructured.Unstructured) (*Store, error) {
	s := newStore(cluster, gvr, kind, namespaced)
	raws := make([][]byte, len(objs))
	for i, o := range objs {
		raw, err := compactJSON(o.DeepCopy(), searchv1alpha1.CachedFromClusterAnnotation, cluster)
		if err != nil {
			return nil, err
		}
		raws[i] = raw
	}
	c, err := newCodec(raws)
	if err != nil {
		return nil, err
	}
	items := make(map[string]entry, len(objs))
	for i, o := range objs {
		items[Key(o.GetNamespace(), o.GetName())] = entry{rv: parseRV(o.GetResourceVersion()), data: c.compress(raws[i])}
	}
	s.replace(items, rv, c)
	return s, nil
}
