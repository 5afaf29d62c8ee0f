package worker

import (
	"reflect"
	"testing"
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
