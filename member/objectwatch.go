package member

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ObjectWatch is a watch of one member object (WatchObject).
type ObjectWatch struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	key      string
}

// Get returns the watched object as an object its caller may change, when
// the watch has listed and the object exists.
func (w *ObjectWatch) Get() (*unstructured.Unstructured, bool) {
	if !w.informer.HasSynced() {
		return nil, false
	}
	obj, exists, err := w.informer.GetStore().GetByKey(w.key)
	if err != nil || !exists {
		return nil, false
	}
	return Unstructured(obj)
}

// Synced reports whether the watch has listed.
func (w *ObjectWatch) Synced() bool { return w.informer.HasSynced() }

// Stop ends the watch.
func (w *ObjectWatch) Stop() { w.cancel() }

// WatchObject watches one object of gvr in a running member (a field
// selector on its name), for a reader that follows a few objects no label
// selects (the execution controller's objects taken over untouched):
// handler receives its events, the first list's included. The watch ends
// with Stop, or when the member stops or its connection changes. False
// when the member does not run on the connection with key (Client.Key):
// the reader's state for that connection is stale.
func (s *Hub) WatchObject(cluster, key string, gvr schema.GroupVersionResource, namespace, name string, handler cache.ResourceEventHandler) (*ObjectWatch, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.members.Get(cluster)
	if !ok || m.key != key {
		return nil, false
	}
	ri := m.client.Dynamic.Resource(gvr).Namespace(namespace)
	byName := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = byName
			return ri.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = byName
			return ri.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	_ = inf.SetTransform(trimUnstructured)
	// Only a started informer refuses handlers; this one is new.
	_, _ = inf.AddEventHandler(handler)
	ctx, cancel := context.WithCancel(m.ctx)
	go inf.RunWithContext(ctx)
	objKey := name
	if namespace != "" {
		objKey = namespace + "/" + name
	}
	return &ObjectWatch{informer: inf, cancel: cancel, key: objKey}, true
}
