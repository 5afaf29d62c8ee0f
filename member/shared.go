package member

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// Shared is another cache of members' objects kept in the same process
// (the search cache, where a ResourceRegistry caches Pods or Nodes): the
// pod and node informers read it instead of watching the member a second
// time. It returns a ListerWatcher over its copy of resource in cluster,
// decoding with decoder into newList's items, or false when it holds no
// complete, listed copy. Its objects carry the member's resourceVersions.
type Shared func(cluster string, gvr schema.GroupVersionResource, decoder runtime.Decoder, newList func() runtime.Object) (cache.ListerWatcher, bool)

var (
	podsResource  = corev1.SchemeGroupVersion.WithResource("pods")
	nodesResource = corev1.SchemeGroupVersion.WithResource("nodes")
)

// sourceGauge is 1 for the source each member informer reads now.
var sourceGauge = metrics.NewGaugeVec(&metrics.GaugeOpts{
	Namespace: "flotilla", Subsystem: "member_informer", Name: "source",
	Help:           "1 for where a member's pod or node informer reads: the member itself, or a cache of the same process that holds them (the search cache).",
	StabilityLevel: metrics.ALPHA,
}, []string{"cluster", "resource", "source"})

func init() { legacyregistry.MustRegister(sourceGauge) }

// Source names where an informer's last list or watch came from.
type Source string

const (
	FromMember Source = "member"
	FromShared Source = "shared"
)

// sourceLW lists and watches from the shared cache when it has the
// resource, else from the member. Each call chooses again: when the shared
// copy stops, its watch ends and the informer watches the member from the
// same resourceVersion; when it appears, the member's watch is ended (a
// check every few seconds) and the next watch reads the shared copy.
type sourceLW struct {
	cluster string
	gvr     schema.GroupVersionResource
	member  cache.ListerWatcherWithContext
	shared  Shared // nil: none
	newList func() runtime.Object
	// decoder decodes the shared copy (default: the typed scheme's).
	decoder runtime.Decoder
	// selector, when set, selects the objects of the shared copy; the
	// member ListerWatcher applies it itself.
	selector labels.Selector
	// checkEvery is how often a member watch asks whether the shared copy
	// has appeared.
	checkEvery time.Duration
	last       atomic.Value // Source
}

var (
	_ cache.ListerWatcher            = &sourceLW{}
	_ cache.ListerWatcherWithContext = &sourceLW{}
)

// IsWatchListSemanticsUnSupported: the reflector lists, then watches (the
// shared cache sends no initial-events-end bookmark).
func (s *sourceLW) IsWatchListSemanticsUnSupported() bool { return true }

// decoder decodes the shared cache's JSON into typed objects.
var decoder = scheme.Codecs.UniversalDeserializer()

// sharedLW is a ListerWatcher over the shared copy, when there is one.
func (s *sourceLW) sharedLW() (cache.ListerWatcher, bool) {
	if s.shared == nil {
		return nil, false
	}
	d := s.decoder
	if d == nil {
		d = decoder
	}
	lw, ok := s.shared(s.cluster, s.gvr, d, s.newList)
	if !ok || s.selector == nil || s.selector.Empty() {
		return lw, ok
	}
	return &selectingLW{inner: cache.ToListerWatcherWithContext(lw), selector: s.selector}, true
}

// defaultSwitchCheck is how often a watch of a member asks whether the
// shared copy has appeared.
const defaultSwitchCheck = 5 * time.Second

// pick chooses the source of the next list or watch and records it.
func (s *sourceLW) pick(ctx context.Context) (cache.ListerWatcherWithContext, Source) {
	from, lw := FromMember, s.member
	if l, ok := s.sharedLW(); ok {
		from, lw = FromShared, cache.ToListerWatcherWithContext(l)
	}
	if prev, _ := s.last.Swap(from).(Source); prev != from {
		klog.FromContext(ctx).V(2).Info("Member informer source", "cluster", s.cluster, "resource", s.gvr.Resource, "from", from)
		for _, src := range []Source{FromMember, FromShared} {
			v := 0.0
			if src == from {
				v = 1
			}
			sourceGauge.WithLabelValues(s.cluster, s.gvr.Resource, string(src)).Set(v)
		}
	}
	return lw, from
}

// forget drops the informer's gauge (its member stopped).
func (s *sourceLW) forget() {
	for _, src := range []Source{FromMember, FromShared} {
		sourceGauge.DeleteLabelValues(s.cluster, s.gvr.Resource, string(src))
	}
}

// source is where the last list or watch came from.
func (s *sourceLW) source() Source {
	v, _ := s.last.Load().(Source)
	return v
}

func (s *sourceLW) List(options metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), options)
}

func (s *sourceLW) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	lw, _ := s.pick(ctx)
	return lw.ListWithContext(ctx, options)
}

func (s *sourceLW) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), options)
}

func (s *sourceLW) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	lw, from := s.pick(ctx)
	w, err := lw.WatchWithContext(ctx, options)
	if err != nil || from == FromShared {
		return w, err
	}
	// Watching the member: end the watch once the shared copy is there, so
	// the informer's next watch reads it.
	return newSwitchWatch(w, func() bool { _, ok := s.sharedLW(); return ok }, s.checkEvery), nil
}

// switchWatch passes a member watch's events on until ready reports true
// (checked every interval), then ends.
type switchWatch struct {
	inner  watch.Interface
	result chan watch.Event
	stop   chan struct{}
	once   sync.Once
}

func newSwitchWatch(inner watch.Interface, ready func() bool, interval time.Duration) *switchWatch {
	w := &switchWatch{inner: inner, result: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(w.result)
		defer inner.Stop()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case ev, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				select {
				case w.result <- ev:
				case <-w.stop:
					return
				}
			case <-tick.C:
				if ready() {
					return
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

func (w *switchWatch) Stop() { w.once.Do(func() { close(w.stop) }) }

func (w *switchWatch) ResultChan() <-chan watch.Event { return w.result }

// podsAndNodes returns the member's pod and node informers, built on
// sourceLW.
func (st *Hub) podsAndNodes(name string, cs kubernetes.Interface) (pods, nodes *sourceLW, podInformer, nodeInformer func(kubernetes.Interface, time.Duration) cache.SharedIndexInformer) {
	pods = &sourceLW{cluster: name, gvr: podsResource, shared: st.shared, checkEvery: st.switchCheck, newList: func() runtime.Object { return &corev1.PodList{} },
		member: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return cs.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return cs.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
			},
		}}
	nodes = &sourceLW{cluster: name, gvr: nodesResource, shared: st.shared, checkEvery: st.switchCheck, newList: func() runtime.Object { return &corev1.NodeList{} },
		member: &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return cs.CoreV1().Nodes().List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return cs.CoreV1().Nodes().Watch(ctx, o)
			},
		}}
	podInformer = func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(pods, &corev1.Pod{}, resync, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	nodeInformer = func(_ kubernetes.Interface, resync time.Duration) cache.SharedIndexInformer {
		return cache.NewSharedIndexInformer(nodes, &corev1.Node{}, resync, cache.Indexers{})
	}
	return pods, nodes, podInformer, nodeInformer
}

// selectingLW passes on the objects of a shared copy that selector
// matches, as the member's API server does for a labelSelector: a
// modification of an object that no longer matches is a deletion (an
// informer ignores the deletion of an object it never held). The shared
// copy marks its objects as cached; that mark is not the member's and is
// dropped.
type selectingLW struct {
	inner    cache.ListerWatcherWithContext
	selector labels.Selector
}

func (l *selectingLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l *selectingLW) matches(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	return err == nil && l.selector.Matches(labels.Set(m.GetLabels()))
}

// List implements cache.Lister, for callers without a context.
func (l *selectingLW) List(options metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), options)
}

// Watch implements cache.Watcher, for callers without a context.
func (l *selectingLW) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), options)
}

func (l *selectingLW) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	list, err := l.inner.ListWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	kept := items[:0]
	for _, it := range items {
		if l.matches(it) {
			kept = append(kept, unmark(it))
		}
	}
	if err := meta.SetList(list, kept); err != nil {
		return nil, err
	}
	return list, nil
}

func (l *selectingLW) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	w, err := l.inner.WatchWithContext(ctx, options)
	if err != nil {
		return nil, err
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		switch ev.Type {
		case watch.Added:
			if !l.matches(ev.Object) {
				return ev, false
			}
		case watch.Modified:
			if !l.matches(ev.Object) {
				ev.Type = watch.Deleted
			}
		}
		if ev.Object != nil && ev.Type != watch.Error && ev.Type != watch.Bookmark {
			ev.Object = unmark(ev.Object)
		}
		return ev, true
	}), nil
}

// unmark drops the shared copy's cached-from-cluster annotation.
func unmark(obj runtime.Object) runtime.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	if a := m.GetAnnotations(); a != nil {
		if _, ok := a[searchv1alpha1.CachedFromClusterAnnotation]; ok {
			delete(a, searchv1alpha1.CachedFromClusterAnnotation)
			if len(a) == 0 {
				a = nil
			}
			m.SetAnnotations(a)
		}
	}
	return obj
}
