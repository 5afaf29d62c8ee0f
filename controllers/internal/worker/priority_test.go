package worker

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestPriorityQueueOrder(t *testing.T) {
	prio := map[string]int32{"low-1": 0, "high-1": 10, "low-2": 0, "mid": 5, "high-2": 10}
	q := NewPriorityQueue("", func(k string) int32 { return prio[k] })
	defer q.ShutDown()
	for _, k := range []string{"low-1", "high-1", "low-2", "mid", "high-2", "low-1"} {
		q.Add(k)
	}
	// low-2 is raised while it waits: it moves ahead of the other lows.
	prio["low-2"] = 7
	q.Add("low-2")
	var got []string
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	want := []string{"high-1", "high-2", "low-2", "mid", "low-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestPriorityQueueRequeueWhileProcessing(t *testing.T) {
	q := NewPriorityQueue("", func(k string) int32 { return map[string]int32{"a": 1, "b": 2}[k] })
	defer q.ShutDown()
	q.Add("a")
	k, _ := q.Get()
	q.Add("a") // dirty while processing: comes back after Done
	q.Add("b")
	q.Done(k)
	first, _ := q.Get()
	second, _ := q.Get()
	if first != "b" || second != "a" || q.Len() != 0 {
		t.Errorf("got %s then %s (len %d), want b then a", first, second, q.Len())
	}
}

// TestFairByNamespace: a burst queued in one namespace does not hold back
// keys queued later in others; each namespace keeps its own order.
func TestFairByNamespace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		burst int
		later []string
		// want: the first keys to come out.
		want []string
	}{
		{"a key after a burst comes out second", 1000, []string{"b/x"}, []string{"a/0", "b/x", "a/1"}},
		{"two namespaces after a burst take turns", 1000, []string{"b/x", "b/y", "c/z"}, []string{"a/0", "b/x", "c/z", "a/1", "b/y", "a/2"}},
		{"cluster-scoped keys are one namespace", 3, []string{"n1", "n2"}, []string{"a/0", "n1", "a/1", "n2", "a/2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue("")
			defer q.ShutDown()
			for i := range tc.burst {
				q.Add(fmt.Sprintf("a/%d", i))
			}
			for _, k := range tc.later {
				q.Add(k)
			}
			var got []string
			for range tc.want {
				k, _ := q.Get()
				got = append(got, k)
				q.Done(k)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFairQueueServesLaterKeysAfterIdle: a namespace idle while another
// was served starts from what is served now, not from its old place.
func TestFairQueueServesLaterKeysAfterIdle(t *testing.T) {
	q := NewQueue("")
	defer q.ShutDown()
	q.Add("b/early")
	k, _ := q.Get()
	q.Done(k)
	for i := range 5 {
		q.Add(fmt.Sprintf("a/%d", i))
	}
	for range 3 {
		k, _ := q.Get()
		q.Done(k)
	}
	q.Add("b/late")
	q.Add("c/late")
	var got []string
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	want := []string{"a/3", "b/late", "c/late", "a/4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestOldestAge(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newFairHeap(Namespace, func(string) int32 { return 0 }, func() time.Time { return now })
	if h.oldest() != 0 {
		t.Errorf("empty: %v", h.oldest())
	}
	h.Push("a/1")
	now = now.Add(3 * time.Second)
	h.Push("b/1")
	now = now.Add(2 * time.Second)
	if got := h.oldest(); got != 5*time.Second {
		t.Errorf("oldest %v, want 5s", got)
	}
	if k := h.Pop(); k != "a/1" {
		t.Fatalf("popped %s", k)
	}
	if got := h.oldest(); got != 2*time.Second {
		t.Errorf("after the oldest left: %v, want 2s", got)
	}
}

// TestAddInitial: keys of an informer's initial list come out after every
// key queued otherwise (among themselves by priority, then fairly by
// namespace); one changed while it waits is served as the others; one
// marked initial again keeps its place; one marked while being processed
// comes back as initial.
func TestAddInitial(t *testing.T) {
	prio := map[string]int32{"a/high": 10}
	q := NewPriorityQueue("", func(k string) int32 { return prio[k] })
	defer q.ShutDown()
	for _, k := range []string{"a/1", "a/2", "a/high", "b/1"} {
		q.AddInitial(k)
	}
	q.Add("b/live")
	q.Add("a/live")
	q.Add("a/2")           // changed while it waits: no longer initial
	q.AddInitial("a/1")    // listed again: stays behind
	q.AddInitial("b/live") // waiting as live: keeps its place
	var got []string
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	want := []string{"b/live", "a/live", "a/2", "a/high", "a/1", "b/1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}

	q.Add("c/1")
	k, _ := q.Get()
	q.AddInitial("c/1") // dirty while processing: pushed as initial after Done
	q.Add("c/2")
	q.Done(k)
	first, _ := q.Get()
	second, _ := q.Get()
	if first != "c/2" || second != "c/1" {
		t.Errorf("got %s then %s, want c/2 then c/1", first, second)
	}
}
