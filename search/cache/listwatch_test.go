package cache

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"
)

func podListWatch(s *Store) *ListWatch {
	return &ListWatch{Store: s, Decoder: scheme.Codecs.UniversalDeserializer(), NewList: func() runtime.Object { return &corev1.PodList{} }}
}

// An informer over a store lists its typed objects, follows its changes
// and sees the watch end when the store stops.
func TestListWatchFeedsAnInformer(t *testing.T) {
	s := fill(t, 30)
	lw := podListWatch(s)
	list, err := lw.List(metav1.ListOptions{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	pods := list.(*corev1.PodList)
	if len(pods.Items) != 30 || pods.ResourceVersion != "30" {
		t.Fatalf("listed %d pods at %q, want 30 at 30", len(pods.Items), pods.ResourceVersion)
	}
	if p := pods.Items[0]; p.Spec.NodeName == "" || p.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" || p.Labels["app"] == "" {
		t.Fatalf("decoded pod lost fields: %+v", p)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0, toolscache.Indexers{})
	go inf.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("not synced")
	}
	if n := len(inf.GetStore().List()); n != 30 {
		t.Fatalf("informer holds %d pods, want 30", n)
	}
	// A change in the store reaches the informer.
	changed := testPod("ns-0", "pod-00000", 31)
	changed.SetLabels(map[string]string{"app": "changed"})
	raw, err := compactJSON(changed, "resource.karmada.io/cached-from-cluster", "member1")
	if err != nil {
		t.Fatal(err)
	}
	s.apply(watch.Modified, Key("ns-0", "pod-00000"), 31, s.codec.compress(raw))
	s.apply(watch.Deleted, Key("ns-1", "pod-00001"), 32, nil)
	if err := waitFor(func() bool {
		obj, ok, _ := inf.GetStore().GetByKey("ns-0/pod-00000")
		_, stillThere, _ := inf.GetStore().GetByKey("ns-1/pod-00001")
		return ok && obj.(*corev1.Pod).Labels["app"] == "changed" && !stillThere
	}); err != nil {
		t.Fatal("the change and the deletion did not reach the informer")
	}
	if rv := inf.LastSyncResourceVersion(); rv != "32" {
		t.Errorf("informer at resourceVersion %q, want 32", rv)
	}
}

func TestListWatchWatch(t *testing.T) {
	s := fill(t, 5)
	lw := podListWatch(s)
	// From a kept resourceVersion: only the later changes.
	raw, _ := compactJSON(testPod("ns-0", "pod-new", 6), "k", "member1")
	s.apply(watch.Added, Key("ns-0", "pod-new"), 6, s.codec.compress(raw))
	w, err := lw.Watch(metav1.ListOptions{ResourceVersion: "5"})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	if p, ok := ev.Object.(*corev1.Pod); ev.Type != watch.Added || !ok || p.Name != "pod-new" || p.ResourceVersion != "6" {
		t.Fatalf("first event %s %#v, want the addition of pod-new at 6", ev.Type, ev.Object)
	}
	// The store stops (its registry went away): the watch ends.
	s.stop()
	select {
	case _, open := <-w.ResultChan():
		if open {
			t.Fatal("an event after the store stopped")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not end when the store stopped")
	}
	w.Stop()

	// A resourceVersion older than the store keeps: 410 Gone.
	s2 := fill(t, 5)
	for i := range ringSize + 1 {
		s2.apply(watch.Deleted, Key("x", fmt.Sprint(i)), uint64(10+i), nil)
		raw, _ := compactJSON(testPod("x", fmt.Sprint(i), 10+i), "k", "member1")
		s2.apply(watch.Added, Key("x", fmt.Sprint(i)), uint64(10+i), s2.codec.compress(raw))
	}
	if _, err := podListWatch(s2).Watch(metav1.ListOptions{ResourceVersion: "3"}); !apierrors.IsResourceExpired(err) {
		t.Fatalf("watch from a resourceVersion no longer kept: %v, want 410 Expired", err)
	}
	if _, err := podListWatch(s2).Watch(metav1.ListOptions{ResourceVersion: "x"}); !apierrors.IsBadRequest(err) {
		t.Fatalf("watch from a bad resourceVersion: %v, want 400", err)
	}
}
