package execution

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"

	"github.com/flotilla-io/flotilla/member"
)

// TestUntouchedWatchesBounded: objects taken over untouched are watched
// one by one up to the member's bound; beyond it their Works are read
// again periodically, and a watch freed by a Work that goes is taken by
// the next one asking.
func TestUntouchedWatchesBounded(t *testing.T) {
	// The fake dynamic client does not serve watch-list as a member does.
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	deploy := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("default")
		u.SetName(name)
		u.SetResourceVersion("1")
		return u
	}
	var objs []runtime.Object
	for i := range 3 {
		objs = append(objs, deploy(fmt.Sprintf("d%d", i)))
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "DeploymentList"}, objs...)
	client := &member.Client{Dynamic: dyn}

	m := newMember("member1")
	t.Cleanup(m.queue.ShutDown)
	m.maxUntouched, m.untouchedPoll = 2, 20*time.Millisecond
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.informers != nil {
			m.informers.stop()
		}
	})
	watched := func() []string {
		m.mu.Lock()
		defer m.mu.Unlock()
		var names []string
		for k := range m.informers.untouched {
			names = append(names, k.name)
		}
		return names
	}
	for i := range 3 {
		if err := m.watchUntouched(client, gvr, deploy(fmt.Sprintf("d%d", i)), fmt.Sprintf("ns/work%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := watched(); len(got) != 2 {
		t.Fatalf("watched %v, want 2 (the bound)", got)
	}
	// The third is read again soon, not watched.
	if k := nextQueued(t, m); k != "ns/work2" {
		t.Errorf("queued %q, want ns/work2 (the object beyond the bound)", k)
	}

	// A Work goes: its watch is free for the next that asks.
	m.unwatchWork("ns/work0")
	if err := m.watchUntouched(client, gvr, deploy("d2"), "ns/work2"); err != nil {
		t.Fatal(err)
	}
	names := watched()
	if len(names) != 2 || !contains(names, "d2") || contains(names, "d0") {
		t.Errorf("after work0 went, watched %v, want d1 and d2", names)
	}

	// A change of a watched object queues its Work.
	waitFor(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		w := m.informers.untouched[objectKey{gvr: gvr, namespace: "default", name: "d1"}]
		return w != nil && w.informer.HasSynced()
	})
	changed := deploy("d1")
	changed.SetResourceVersion("2")
	changed.SetLabels(map[string]string{"someone": "else"})
	if _, err := dyn.Resource(gvr).Namespace("default").Update(t.Context(), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The fake client ignores the field selector, so d2's watch sees d1's
	// change too and may queue work2 first: look for work1 among the next.
	var queued []string
	for !slices.Contains(queued, "ns/work1") && len(queued) < 3 {
		queued = append(queued, nextQueued(t, m))
	}
	if !slices.Contains(queued, "ns/work1") {
		t.Errorf("queued %v after d1 changed, want ns/work1 among them", queued)
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

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
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
