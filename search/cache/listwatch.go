package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// Shared returns the store of resource in cluster when it caches the
// resource in every namespace and has listed it: other caches of the same
// process (the metrics adapter's pod and node informers) read it instead of
// asking the member for the same objects again.
func (m *Manager) Shared(cluster string, gvr schema.GroupVersionResource) (*Store, bool) {
	m.mu.RLock()
	r, ok := m.runningStore(storeID{cluster: cluster, gvr: gvr})
	m.mu.RUnlock()
	if !ok || !r.allNamespaces || !r.store.Synced() {
		return nil, false
	}
	return r.store, true
}

// ListWatch is a client-go ListerWatcher over a Store: List decodes every
// cached object into NewList's type, Watch replays and follows the store's
// changes. Objects keep the member's resourceVersions, so an informer may
// switch between a store and the member itself without listing again.
type ListWatch struct {
	Store *Store
	// Decoder turns a cached object's JSON into a typed object.
	Decoder runtime.Decoder
	// NewList returns an empty list of the typed objects.
	NewList func() runtime.Object
}

var (
	_ cache.ListerWatcherWithContext = &ListWatch{}
	_ cache.ListerWatcher            = &ListWatch{}
)

// IsWatchListSemanticsUnSupported tells client-go's reflector to list and
// then watch: the store sends no initial-events-end bookmark.
func (l *ListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// List returns every cached object, ignoring paging: the store answers from
// memory at one resourceVersion.
func (l *ListWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), options)
}

func (l *ListWatch) ListWithContext(_ context.Context, _ metav1.ListOptions) (runtime.Object, error) {
	items, rv, _ := l.Store.List("", "", 0, nil)
	objs := make([]runtime.Object, 0, len(items))
	var buf []byte
	for _, it := range items {
		obj, err := l.decode(&buf, it.Data)
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	}
	list := l.NewList()
	if err := meta.SetList(list, objs); err != nil {
		return nil, err
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	acc.SetResourceVersion(strconv.FormatUint(rv, 10))
	return list, nil
}

func (l *ListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), options)
}

// WatchWithContext follows the store from options.ResourceVersion ("" or
// "0": every object first, as additions). A resourceVersion older than the
// store keeps answers 410 Gone: the informer lists again. The watch ends
// when the store stops; the informer then watches again, from whatever
// source its ListerWatcher picks.
func (l *ListWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	var from uint64
	all := options.ResourceVersion == "" || options.ResourceVersion == "0"
	if !all {
		n, err := strconv.ParseUint(options.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q: %v", options.ResourceVersion, err))
		}
		from = n
	}
	w, err := l.Store.Watch(from, all)
	if errors.Is(err, ErrTooOld) {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, l.Store.RV()))
	}
	if err != nil {
		return nil, err
	}
	sw := &storeWatch{result: make(chan watch.Event), stop: make(chan struct{})}
	go sw.run(ctx, l, w)
	return sw, nil
}

func (l *ListWatch) decode(buf *[]byte, data []byte) (runtime.Object, error) {
	raw, err := l.Store.Decode((*buf)[:0], data)
	if err != nil {
		return nil, err
	}
	*buf = raw
	obj, _, err := l.Decoder.Decode(raw, nil, nil)
	return obj, err
}

// storeWatch is a watch.Interface over a store's Watcher.
type storeWatch struct {
	result chan watch.Event
	stop   chan struct{}
	once   sync.Once
}

func (s *storeWatch) Stop() { s.once.Do(func() { close(s.stop) }) }

func (s *storeWatch) ResultChan() <-chan watch.Event { return s.result }

func (s *storeWatch) run(ctx context.Context, l *ListWatch, w *Watcher) {
	defer close(s.result)
	defer w.Stop()
	var buf []byte
	send := func(ev Event) bool {
		obj, err := l.decode(&buf, ev.data)
		if err == nil {
			// A deletion carries the object as it was; its resourceVersion
			// is the deletion's, as a member's watch sends it.
			var acc metav1.Object
			if acc, err = meta.Accessor(obj); err == nil {
				acc.SetResourceVersion(strconv.FormatUint(ev.RV, 10))
			}
		}
		if err != nil {
			obj, ev.Type = &apierrors.NewInternalError(err).ErrStatus, watch.Error
		}
		select {
		case s.result <- watch.Event{Type: ev.Type, Object: obj}:
			return ev.Type != watch.Error
		case <-s.stop:
		case <-ctx.Done():
		}
		return false
	}
	for _, ev := range w.Initial {
		if !send(ev) {
			return
		}
	}
	for {
		select {
		case ev := <-w.C():
			if !send(ev) {
				return
			}
		case <-w.Done():
			return
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}
