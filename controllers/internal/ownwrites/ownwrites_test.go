package ownwrites

import "testing"

func TestPending(t *testing.T) {
	t.Parallel()
	var w Writes[string, int]
	if _, ok := w.Pending("a", "1"); ok {
		t.Fatal("pending without a write")
	}
	w.Record("a", "5", 42)
	if v, ok := w.Pending("a", "5"); !ok || v != 42 {
		t.Errorf("cache at the replaced version: %v %v, want 42 true", v, ok)
	}
	if _, ok := w.Pending("a", "6"); ok {
		t.Error("pending after the cache moved on")
	}
	if _, ok := w.Pending("a", "5"); ok {
		t.Error("the record survived the cache moving on")
	}
	w.Record("b", "1", 1)
	w.Forget("b")
	if _, ok := w.Pending("b", "1"); ok {
		t.Error("pending after Forget")
	}
}

// A patch without resourceVersion lands over a version the cache has not
// seen (another writer's): the cache shows that version before the write,
// and the write is still pending then.
func TestPendingOverAnUnseenVersion(t *testing.T) {
	t.Parallel()
	var w Writes[string, int]
	w.RecordWrite("a", "5", "9", 42) // replaced 5 in the cache; 7 was the server's
	for _, rv := range []string{"5", "7", "8"} {
		if v, ok := w.Pending("a", rv); !ok || v != 42 {
			t.Errorf("cache at %s, older than the write's 9: %v %v, want 42 true", rv, v, ok)
		}
	}
	if _, ok := w.Pending("a", "9"); ok {
		t.Error("pending once the cache holds the write")
	}
	if _, ok := w.Pending("a", "7"); ok {
		t.Error("the record survived the cache showing the write")
	}
	w.RecordWrite("b", "5", "not-a-number", 1)
	if _, ok := w.Pending("b", "6"); ok {
		t.Error("versions that are not integers: pending after the cache moved on")
	}
	w.RecordWrite("c", "5", "9", 1)
	if _, ok := w.Pending("c", "10"); ok {
		t.Error("pending with the cache past the write")
	}
}
