package descheduler

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
)

// newController is the controller over a cache of bindings, with members
// m1 and m2 Ready and their pods as given; patches and events are
// recorded.
func newController(t *testing.T, bindings []*workv1alpha2.ResourceBinding, pods map[string][]*corev1.Pod) (*Controller, *[]string, *[]string) {
	t.Helper()
	index := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, b := range bindings {
		if err := index.Add(b); err != nil {
			t.Fatal(err)
		}
	}
	var patches, events []string
	c := &Controller{
		opts: DefaultOptions(), bindings: worklisters.NewResourceBindingLister(index), queue: worker.NewQueue(""),
		measure: measureReconciler{
			clusterReady: func(name string) bool { return name == "m1" || name == "m2" },
			selector: func(context.Context, string, string, string) (labels.Selector, error) {
				return labels.SelectorFromSet(labels.Set{"app": "web"}), nil
			},
			pods: func(cluster, _ string) ([]*member.Pod, error) { return hubPodsOf(pods[cluster]...), nil },
			now:  func() time.Time { return now }, threshold: 5 * time.Minute,
		},
		write: writeReconciler{
			patch: func(_ context.Context, namespace, name string, body []byte) error {
				patches = append(patches, namespace+"/"+name+" "+string(body))
				return nil
			},
			record: func(_ runtime.Object, _, reason, _ string) { events = append(events, reason) },
		},
	}
	t.Cleanup(c.queue.ShutDown)
	return c, &patches, &events
}

func TestEnqueueCandidates(t *testing.T) {
	t.Parallel()
	static := rb(staticPlacement)
	static.Name = "static-deployment"
	pending := rb(dynamicPlacement)
	pending.Name = "pending-deployment"
	pending.Generation = 4
	c, _, _ := newController(t, []*workv1alpha2.ResourceBinding{rb(dynamicPlacement), static, pending}, nil)
	c.enqueueCandidates(context.Background())
	var got []string
	for c.queue.Len() > 0 {
		k, _ := c.queue.Get()
		c.queue.Done(k)
		got = append(got, k)
	}
	if diff := cmp.Diff([]string{"ns/web-deployment"}, got); diff != "" {
		t.Errorf("queued (-want +got):\n%s", diff)
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	long := now.Add(-10 * time.Minute)
	other := pod("o", "unschedulable", long)
	other.Labels = map[string]string{"app": "other"}
	m1 := []*corev1.Pod{pod("a", "ready", now), pod("b", "ready", now), pod("u", "unschedulable", long), pod("v", "unschedulable", long), other}
	m2 := []*corev1.Pod{pod("c", "ready", now), pod("d", "ready", now)}
	withStatus := func(b *workv1alpha2.ResourceBinding, items ...workv1alpha2.AggregatedStatusItem) *workv1alpha2.ResourceBinding {
		b.Status.AggregatedStatus = items
		return b
	}
	for _, tc := range []struct {
		name        string
		binding     *workv1alpha2.ResourceBinding
		pods        map[string][]*corev1.Pod
		wantPatches []string
		wantEvents  []string
	}{
		{name: "m1's two unschedulable replicas taken off; m2 untouched; other workloads' pods do not count",
			binding: withStatus(rb(dynamicPlacement), status("m1", `{"readyReplicas":2}`), status("m2", `{"readyReplicas":2}`)),
			pods:    map[string][]*corev1.Pod{"m1": m1, "m2": m2},
			wantPatches: []string{
				`ns/web-deployment {"metadata":{"resourceVersion":"42"},"spec":{"clusters":[{"name":"m1","replicas":2},{"name":"m2","replicas":2}]}}`},
			wantEvents: []string{EventReasonDescheduleBindingSucceed, EventReasonDescheduleBindingSucceed}},
		{name: "all Ready by the aggregated status: m1 not looked at",
			binding: withStatus(rb(dynamicPlacement), status("m1", `{"readyReplicas":4}`), status("m2", `{"readyReplicas":2}`)),
			pods:    map[string][]*corev1.Pod{"m1": m1, "m2": m2}},
		{name: "a static placement is never descheduled",
			binding: rb(staticPlacement), pods: map[string][]*corev1.Pod{"m1": m1, "m2": m2}},
		{name: "no pod unschedulable long enough",
			binding: rb(dynamicPlacement), pods: map[string][]*corev1.Pod{"m1": {pod("a", "ready", now), pod("u", "unschedulable", now)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, patches, events := newController(t, []*workv1alpha2.ResourceBinding{tc.binding}, tc.pods)
			if err := c.reconcile(context.Background(), "ns/web-deployment"); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPatches, *patches); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, *events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
	c, patches, _ := newController(t, nil, nil)
	if err := c.reconcile(context.Background(), "ns/gone"); err != nil || len(*patches) != 0 {
		t.Errorf("a binding gone: err %v, patches %v", err, *patches)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{DeschedulingInterval: 0, UnschedulableThreshold: time.Minute}, {DeschedulingInterval: time.Minute, UnschedulableThreshold: -time.Second}} {
		if _, err := New(o, nil, nil, nil, nil, nil); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}
