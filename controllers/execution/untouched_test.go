package execution

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/member"
)

func untouchedDeploy(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace("default")
	u.SetName(name)
	u.SetResourceVersion("1")
	return u
}

// watchedUntouched returns the names of the member's watched untouched
// objects.
func (f *fixture) watchedUntouched() []string {
	u, ok := f.c.untouched.Get(testCluster)
	if !ok {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var names []string
	for k := range u.byKey {
		names = append(names, k.name)
	}
	slices.Sort(names)
	return names
}

// TestUntouchedWatchesBounded: objects taken over untouched are watched
// one by one, through the member hub, up to the member's bound; beyond it
// their Works are read again periodically, and a watch freed by a Work
// that goes is taken by the next one asking.
func TestUntouchedWatchesBounded(t *testing.T) {
	// The fake dynamic client does not serve watch-list as a member does.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	var objs []runtime.Object
	for i := range 3 {
		objs = append(objs, untouchedDeploy(fmt.Sprintf("d%d", i)))
	}
	f := newFixture(t, true, nil, objs...)
	f.c.maxUntouched, f.c.untouchedPoll = 2, 20*time.Millisecond
	for i := range 3 {
		if err := f.c.watchUntouched(testCluster, deploymentsGVR, untouchedDeploy(fmt.Sprintf("d%d", i)), fmt.Sprintf("ns/work%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.watchedUntouched(); len(got) != 2 {
		t.Fatalf("watched %v, want 2 (the bound)", got)
	}
	// The third is read again soon, not watched.
	if k := nextQueued(t, f.m); k != "ns/work2" {
		t.Errorf("queued %q, want ns/work2 (the object beyond the bound)", k)
	}

	// A Work goes: its watch is free for the next that asks.
	f.c.unwatchWork(testCluster, "ns/work0")
	if err := f.c.watchUntouched(testCluster, deploymentsGVR, untouchedDeploy("d2"), "ns/work2"); err != nil {
		t.Fatal(err)
	}
	if got := f.watchedUntouched(); !slices.Equal(got, []string{"d1", "d2"}) {
		t.Errorf("after work0 went, watched %v, want d1 and d2", got)
	}

	// A change of a watched object queues its Work.
	waitFor(t, func() bool {
		u, _ := f.c.untouched.Get(testCluster)
		u.mu.Lock()
		defer u.mu.Unlock()
		w := u.byKey[objectKey{gvr: deploymentsGVR, namespace: "default", name: "d1"}]
		return w != nil && w.watch.Synced()
	})
	if got, ok := f.c.untouchedObject(testCluster, deploymentsGVR, untouchedDeploy("d1")); !ok || got.GetName() != "d1" {
		t.Errorf("untouchedObject(d1) = %v, %v; want d1 from its watch", got, ok)
	}
	changed := untouchedDeploy("d1")
	changed.SetResourceVersion("2")
	changed.SetLabels(map[string]string{"someone": "else"})
	if _, err := f.dyn.Resource(deploymentsGVR).Namespace("default").Update(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The fake client ignores the field selector, so d2's watch sees d1's
	// change too and may queue work2 first: look for work1 among the next.
	var queued []string
	for !slices.Contains(queued, "ns/work1") && len(queued) < 3 {
		queued = append(queued, nextQueued(t, f.m))
	}
	if !slices.Contains(queued, "ns/work1") {
		t.Errorf("queued %v after d1 changed, want ns/work1 among them", queued)
	}
}

// TestUntouchedWatchesFollowTheConnection: when the member's connection
// changes, the hub stops the watches of its untouched objects and the
// controller reconciles their Works, which watch them again on the new
// connection; a watch asked for on the old connection is refused.
func TestUntouchedWatchesFollowTheConnection(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	f := newFixture(t, true, nil, untouchedDeploy("d0"))
	if err := f.c.watchUntouched(testCluster, deploymentsGVR, untouchedDeploy("d0"), "ns/work0"); err != nil {
		t.Fatal(err)
	}
	if got := f.watchedUntouched(); !slices.Equal(got, []string{"d0"}) {
		t.Fatalf("watched %v, want d0", got)
	}
	old, _ := f.c.untouched.Get(testCluster)

	moved, err := member.NewClient(&rest.Config{Host: "https://moved.example"})
	if err != nil {
		t.Fatal(err)
	}
	cur := f.client.Load()
	moved.Clientset, moved.Dynamic, moved.Mapper = cur.Clientset, cur.Dynamic, cur.Mapper
	f.client.Store(moved)
	f.hub.Trigger()
	if k := nextQueued(t, f.m); k != "ns/work0" {
		t.Errorf("queued %q after the connection changed, want ns/work0", k)
	}
	if got := f.watchedUntouched(); len(got) != 0 {
		t.Errorf("watched %v on the new connection before any reconcile, want none", got)
	}
	if _, ok := f.hub.WatchObject(testCluster, old.key, deploymentsGVR, "default", "d0", untouchedHandler(func() {})); ok {
		t.Error("the hub watched an object on a connection it no longer runs")
	}
	if err := f.c.watchUntouched(testCluster, deploymentsGVR, untouchedDeploy("d0"), "ns/work0"); err != nil {
		t.Fatal(err)
	}
	if got := f.watchedUntouched(); !slices.Equal(got, []string{"d0"}) {
		t.Errorf("watched %v on the new connection, want d0", got)
	}
}

// nextQueued returns the next key m's queue hands out, failing t after 5 s.
func nextQueued(t *testing.T, m *memberState) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		k, shutdown := m.queue.Get()
		if shutdown {
			return
		}
		m.queue.Done(k)
		got <- k
	}()
	select {
	case k := <-got:
		return k
	case <-time.After(5 * time.Second):
		t.Fatal("nothing queued in 5 s")
		return ""
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
