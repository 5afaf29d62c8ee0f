package member

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/metrics/testutil"
)

func namedPod(name, rv string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// sharedCache is a Shared holding pods of member "m1" while on is set; its
// watches end when it is turned off, as a search store's do when it stops.
type sharedCache struct {
	on      atomic.Bool
	pods    []runtime.Object
	watches chan *watch.FakeWatcher
	asked   atomic.Int32
}

func (c *sharedCache) shared(cluster string, gvr schema.GroupVersionResource, _ runtime.Decoder, newList func() runtime.Object) (cache.ListerWatcher, bool) {
	c.asked.Add(1)
	if !c.on.Load() || cluster != "m1" || gvr != podsResource {
		return nil, false
	}
	return &cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			l := newList().(*corev1.PodList)
			for _, p := range c.pods {
				l.Items = append(l.Items, *p.(*corev1.Pod))
			}
			l.ResourceVersion = "10"
			return l, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFake()
			c.watches <- w
			return w, nil
		},
	}, true
}

// The pod informer reads the shared cache while it holds the member's pods
// and falls back to the member, without a gap, when it goes away; nodes,
// which it does not hold, come from the member throughout.
func TestInformersReadTheSharedCache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	member := fake.NewClientset(namedPod("from-member", "5"), testNode("n1", nil, "cpu", "1"))
	sc := &sharedCache{pods: []runtime.Object{namedPod("from-shared", "9")}, watches: make(chan *watch.FakeWatcher, 10)}
	sc.on.Store(true)
	s := NewHub(nil, nil)
	s.switchCheck = 10 * time.Millisecond
	s.SetShared(sc.shared)
	m1 := startMember(ctx, s, "m1", &Client{Clientset: member})
	defer s.apply(nil)

	has := func(name string) bool {
		m, _ := s.Member("m1")
		_, ok, _ := m.podIndex.GetByKey("ns/" + name)
		return ok
	}
	waitUntil(t, "the pods of the shared cache", func() bool { m, _ := s.Member("m1"); return m.Synced && has("from-shared") })
	if has("from-member") {
		t.Errorf("the member was listed although the shared cache holds its pods")
	}
	m := m1
	if got := m.podSource.source(); got != FromShared {
		t.Errorf("pods from %q, want %q", got, FromShared)
	}
	if got := m.nodeSource.source(); got != FromMember {
		t.Errorf("nodes from %q, want %q", got, FromMember)
	}
	for _, g := range []struct {
		resource string
		src      Source
		want     float64
	}{{"pods", FromShared, 1}, {"pods", FromMember, 0}, {"nodes", FromMember, 1}} {
		if v, err := testutil.GetGaugeMetricValue(sourceGauge.WithLabelValues("m1", g.resource, string(g.src))); err != nil || v != g.want {
			t.Errorf("flotilla_member_informer_source{m1,%s,%s} = %v (%v), want %v", g.resource, g.src, v, err, g.want)
		}
	}
	// A change the shared cache delivers reaches the informer.
	w := <-sc.watches
	w.Add(namedPod("added-shared", "11"))
	waitUntil(t, "a pod the shared cache added", func() bool { return has("added-shared") })

	// The shared copy goes away: its watch ends and the informer watches
	// the member from the last resourceVersion, seeing its later changes.
	sc.on.Store(false)
	w.Stop()
	waitUntil(t, "the informer to watch the member", func() bool { return m.podSource.source() == FromMember })
	if _, err := member.CoreV1().Pods("ns").Create(ctx, namedPod("added-member", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a pod created in the member", func() bool { return has("added-member") })
	if !has("added-shared") {
		t.Errorf("switching to the member dropped what the informer held")
	}

	// The shared copy comes back: the member's watch ends and the
	// informer reads the shared cache again.
	sc.on.Store(true)
	w = <-sc.watches
	if got := m.podSource.source(); got != FromShared {
		t.Errorf("pods from %q after the shared copy came back, want %q", got, FromShared)
	}
	w.Add(namedPod("added-shared-again", "12"))
	waitUntil(t, "a pod the shared cache added after the switch back", func() bool { return has("added-shared-again") })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
