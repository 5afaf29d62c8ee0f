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
