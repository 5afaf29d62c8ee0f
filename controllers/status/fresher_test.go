package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// After a status write, a cache still holding the replaced version is
// read as what was written (no conflicting write from stale data); once
// the cache catches up the lister's object is used again.
func TestFresherUsesOwnWrite(t *testing.T) {
	t.Parallel()
	c := &Controller{}
	stored := &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Applied: true}}}
	stale := &binding{key: "rb/default/nginx-deployment", meta: &metav1.ObjectMeta{ResourceVersion: "5"}, status: &workv1alpha2.ResourceBindingStatus{}}
	c.written.Record(stale.key, "5", written{rv: "6", status: stored})

	got := c.fresher(stale)
	if got.meta.ResourceVersion != "6" || got.status != stored {
		t.Errorf("fresher = rv %s status %v, want rv 6 and the written status", got.meta.ResourceVersion, got.status)
	}
	if stale.meta.ResourceVersion != "5" || len(stale.status.AggregatedStatus) != 0 {
		t.Error("fresher modified the lister's object")
	}

	caughtUp := &binding{key: stale.key, meta: &metav1.ObjectMeta{ResourceVersion: "6"}, status: stored}
	if got := c.fresher(caughtUp); got != caughtUp {
		t.Error("a cache that caught up was not used")
	}
	if _, ok := c.written.Pending(stale.key, "5"); ok {
		t.Error("the written entry outlived the cache catching up")
	}
}
