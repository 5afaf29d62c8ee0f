package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// testPod is a pod as a member serves it, with managedFields.
func testPod(ns, name string, rv int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"name": name, "namespace": ns, "resourceVersion": fmt.Sprint(rv), "uid": fmt.Sprintf("0b6c1f3e-%04d-4a1e-9c7d-%012d", rv%10000, rv),
			"labels":        map[string]any{"app": "web-" + fmt.Sprint(rv%7), "pod-template-hash": fmt.Sprintf("%x", rv*2654435761%(1<<32))},
			"managedFields": []any{map[string]any{"manager": "kube-controller-manager", "operation": "Update", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{}}}}},
		},
		"spec": map[string]any{
			"nodeName": fmt.Sprintf("node-%d", rv%20), "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
			"containers": []any{map[string]any{"name": "main", "image": "nginx:1.19", "imagePullPolicy": "IfNotPresent",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}, "terminationMessagePath": "/dev/termination-log"}},
			"tolerations": []any{map[string]any{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": int64(300)}},
		},
		"status": map[string]any{"phase": "Running", "podIP": fmt.Sprintf("10.244.%d.%d", rv/250%250, rv%250), "qosClass": "Burstable",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True"}, map[string]any{"type": "PodScheduled", "status": "True"}}},
	}}
}

// fill lists pods into a new store as the reflector would.
func fill(t testing.TB, n int) *Store {
	t.Helper()
	s := newStore("member1", podsGVR, "Pod", true)
	var raws [][]byte
	for i := range n {
		raw, err := compactJSON(testPod(fmt.Sprintf("ns-%d", i%3), fmt.Sprintf("pod-%05d", i), i+1), "resource.karmada.io/cached-from-cluster", "member1")
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	c, err := newCodec(raws[:min(len(raws), 500)])
	if err != nil {
		t.Fatal(err)
	}
	items := map[string]entry{}
	for i, raw := range raws {
		items[Key(fmt.Sprintf("ns-%d", i%3), fmt.Sprintf("pod-%05d", i))] = entry{rv: uint64(i + 1), data: c.compress(raw)}
	}
	s.replace(items, uint64(n), c)
	return s
}

func TestCompactJSONDropsManagedFieldsAndAnnotates(t *testing.T) {
	t.Parallel()
	raw, err := compactJSON(testPod("ns", "p", 1), "resource.karmada.io/cached-from-cluster", "member2")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	md := obj["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; ok {
		t.Error("managedFields kept")
	}
	if got := md["annotations"].(map[string]any)["resource.karmada.io/cached-from-cluster"]; got != "member2" {
		t.Errorf("annotation %v", got)
	}
}

func TestCodecRoundTripAndRatio(t *testing.T) {
	t.Parallel()
	s := fill(t, 600)
	it, ok := s.Get("ns-1/pod-00001")
	if !ok {
		t.Fatal("pod-00001 not cached")
	}
	raw, err := s.Decode(nil, it.Data)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := compactJSON(testPod("ns-1", "pod-00001", 2), "resource.karmada.io/cached-from-cluster", "member1")
	if diff := cmp.Diff(string(want), string(raw)); diff != "" {
		t.Errorf("decoded object differs (-want +got):\n%s", diff)
	}
	if len(it.Data)*4 > len(raw) {
		t.Errorf("compressed %d bytes of %d: the dictionary should make it at least 4 times smaller", len(it.Data), len(raw))
	}
}

func TestListOrderNamespaceAndContinue(t *testing.T) {
	t.Parallel()
	s := fill(t, 30)
	keys := func(items []Item) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.Key)
		}
		return out
	}
	all, _, _ := s.List("", "", 0, nil)
	if len(all) != 30 || !slices.IsSorted(keys(all)) {
		t.Fatalf("list of all: %d items, sorted %v", len(all), slices.IsSorted(keys(all)))
	}
	ns1, _, _ := s.List("ns-1", "", 0, nil)
	if len(ns1) != 10 || ns1[0].Key != "ns-1/pod-00001" {
		t.Errorf("ns-1: %v", keys(ns1))
	}
	page, _, more := s.List("ns-1", "ns-1/pod-00004", 2, nil)
	if diff := cmp.Diff([]string{"ns-1/pod-00007", "ns-1/pod-00010"}, keys(page)); diff != "" || !more {
		t.Errorf("page after pod-00004 (more %v): %s", more, diff)
	}
	odd, _, _ := s.List("", "", 0, func(k string) bool { return k[len(k)-1]%2 == 1 })
	if len(odd) != 15 {
		t.Errorf("filtered list: %d items, want 15", len(odd))
	}
}

func TestWatchResumeReplaceAndTooOld(t *testing.T) {
	t.Parallel()
	s := fill(t, 3)
	w, err := s.Watch(3, false)
	if err != nil {
		t.Fatal(err)
	}
	s.apply(watch.Added, "ns-0/new", 4, []byte("x"))
	s.apply(watch.Modified, "ns-0/new", 5, []byte("y"))
	s.apply(watch.Deleted, "ns-1/pod-00001", 6, nil)
	var got []string
	for range 3 {
		ev := <-w.C()
		got = append(got, fmt.Sprintf("%s %s %d", ev.Type, ev.Key, ev.RV))
	}
	want := []string{"ADDED ns-0/new 4", "MODIFIED ns-0/new 5", "DELETED ns-1/pod-00001 6"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("live events (-want +got):\n%s", diff)
	}
	// Resuming from 4 replays what followed.
	w2, err := s.Watch(4, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(w2.Initial) != 2 || w2.Initial[0].RV != 5 || w2.Initial[1].Type != watch.Deleted {
		t.Errorf("resumed from 4: %+v", w2.Initial)
	}
	// From the start: every object as an addition.
	w3, _ := s.Watch(0, true)
	if len(w3.Initial) != 3 {
		t.Errorf("from the start: %d initial events, want 3", len(w3.Initial))
	}
	// A relist records its differences.
	items := map[string]entry{"ns-0/new": {rv: 5, data: []byte("y")}, "ns-2/late": {rv: 9, data: []byte("z")}}
	s.replace(items, 9, nil)
	got = got[:0]
	for range 3 {
		ev := <-w.C()
		got = append(got, fmt.Sprintf("%s %s", ev.Type, ev.Key))
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"ADDED ns-2/late", "DELETED ns-0/pod-00000", "DELETED ns-2/pod-00002"}, got); diff != "" {
		t.Errorf("relist events (-want +got):\n%s", diff)
	}
	// Once the ring wrapped, an old resourceVersion is too old.
	for i := range ringSize {
		s.apply(watch.Modified, "ns-0/new", uint64(10+i), []byte("y"))
	}
	if _, err := s.Watch(4, false); !errors.Is(err, ErrTooOld) {
		t.Errorf("watch from 4 after %d changes: %v, want ErrTooOld", ringSize, err)
	}
	// A stopped store ends its watches.
	s.stop()
	select {
	case <-w3.Done():
	default:
		t.Error("a watch of a stopped store is not done")
	}
}

func TestSlowWatcherIsClosed(t *testing.T) {
	t.Parallel()
	s := fill(t, 1)
	w, _ := s.Watch(1, false)
	for i := range WatcherBuffer + 1 {
		s.apply(watch.Modified, "ns-0/pod-00000", uint64(2+i), []byte("x"))
	}
	select {
	case <-w.Done():
		if !w.Behind() {
			t.Error("a watcher closed for falling behind does not say so")
		}
	default:
		t.Error("a watcher that fell behind was not closed")
	}
	// A watch the store ends for another reason is not behind.
	w2, _ := s.Watch(0, true)
	s.stop()
	<-w2.Done()
	if w2.Behind() {
		t.Error("a watch of a stopped store says it fell behind")
	}
}

// BenchmarkMemoryPerPod reports the heap one cached pod costs.
// A store's codec is a fixed cost of every cached resource of every
// member: it stays small, and still compresses pods at least 6 times.
func TestCodecFixedCost(t *testing.T) {
	var samples [][]byte
	for i := range 64 {
		raw, err := compactJSON(testPod("ns-1", fmt.Sprintf("pod-%05d", i), 2), "resource.karmada.io/cached-from-cluster", "member1")
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, raw)
	}
	const codecs = 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]*codec, 0, codecs)
	raw, compressed := 0, 0
	for range codecs {
		c, err := newCodec(samples)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			raw += len(s)
			compressed += len(c.compress(s))
		}
		kept = append(kept, c)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCodec := float64(after.HeapAlloc-before.HeapAlloc) / codecs
	t.Logf("%.2f MiB a codec; pods compressed %.1f times", perCodec/(1<<20), float64(raw)/float64(compressed))
	if perCodec > 1.5*(1<<20) {
		t.Errorf("a codec takes %.2f MiB of heap, want at most 1.5", perCodec/(1<<20))
	}
	if compressed*6 > raw {
		t.Errorf("pods compressed %d of %d bytes, want at least 6 times smaller", compressed, raw)
	}
	runtime.KeepAlive(kept)
}

func BenchmarkMemoryPerPod(b *testing.B) {
	n := 100000
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := fill(b, n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "heap-bytes/pod")
		runtime.KeepAlive(s)
	}
}

// TestRingKeepsRecentChanges: changes older than ringAge are dropped (their
// data released) even when the ring is far from ringSize, and a watch from
// before them is too old.
func TestRingKeepsRecentChanges(t *testing.T) {
	t.Parallel()
	s := fill(t, 1)
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	for i := range 10 {
		s.apply(watch.Modified, "ns-0/pod-00000", uint64(2+i), []byte("old"))
	}
	clock = clock.Add(ringAge / 2)
	for i := range 10 {
		s.apply(watch.Modified, "ns-0/pod-00000", uint64(12+i), []byte("new"))
	}
	if w, err := s.Watch(1, false); err != nil || len(w.Initial) != 20 {
		t.Fatalf("within ringAge, watch from 1: %v, %d changes, want all 20", err, len(w.Initial))
	}
	// The first ten are now older than ringAge; the next change drops them.
	clock = clock.Add(ringAge/2 + time.Second)
	s.apply(watch.Modified, "ns-0/pod-00000", 22, []byte("newest"))
	if _, err := s.Watch(1, false); !errors.Is(err, ErrTooOld) {
		t.Errorf("watch from before changes older than ringAge: %v, want ErrTooOld", err)
	}
	w, err := s.Watch(11, false)
	if err != nil || len(w.Initial) != 11 || w.Initial[0].RV != 12 {
		t.Fatalf("watch from 11: %v, %+v, want the 11 changes from 12", err, w.Initial)
	}
	kept := 0
	for _, c := range s.ring {
		if string(c.data) == "old" {
			t.Errorf("change %d older than ringAge still held", c.RV)
		}
		if c.data != nil {
			kept++
		}
	}
	if kept != 11 {
		t.Errorf("%d changes held, want 11", kept)
	}
	// With no change at all, a watch still finds the old ones gone.
	clock = clock.Add(ringAge + time.Second)
	if _, err := s.Watch(21, false); !errors.Is(err, ErrTooOld) {
		t.Errorf("watch from 21 after ringAge without changes: %v, want ErrTooOld", err)
	}
	if w, err := s.Watch(22, false); err != nil || len(w.Initial) != 0 {
		t.Errorf("watch from the store's resourceVersion: %v, %d changes, want none", err, len(w.Initial))
	}
}
