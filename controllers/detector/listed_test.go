package detector

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	worklisters "github.com/flotilla-io/flotilla/apis/generated/listers/work/v1alpha2"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/worker"
	"github.com/flotilla-io/flotilla/member"
)

// recordingQueue records how keys were queued.
type recordingQueue struct {
	worker.Interface
	live, initial []string
}

func (q *recordingQueue) Add(key string)        { q.live = append(q.live, key) }
func (q *recordingQueue) AddInitial(key string) { q.initial = append(q.initial, key) }

// A listed template waits behind the changes, unless it was created lately
// and has no binding: then it is work a takeover finds, and goes with them.
func TestOnTemplateListed(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rbs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = rbs.Add(&workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "bound-deployment"}})
	crbs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	namespaceKind := schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	for _, tc := range []struct {
		name, namespace string
		gvk             schema.GroupVersionKind
		age             time.Duration
		live            bool
	}{
		{"new", "shop", deployment, 10 * time.Second, true},
		{"bound", "shop", deployment, 10 * time.Second, false},
		{"old", "shop", deployment, time.Hour, false},
		{"new-ns", "", namespaceKind, 10 * time.Second, true},
	} {
		q := &recordingQueue{}
		c := &Controller{queue: q, rbs: worklisters.NewResourceBindingLister(rbs), crbs: worklisters.NewClusterResourceBindingLister(crbs), now: func() time.Time { return now }}
		obj := &member.Compact{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: tc.name, CreationTimestamp: metav1.NewTime(now.Add(-tc.age))}}
		c.OnTemplateListed(tc.gvk, obj)
		if got := len(q.live) == 1; got != tc.live || len(q.live)+len(q.initial) != 1 {
			t.Errorf("%s (%s old): queued live %v, initial %v; want live %t", tc.name, tc.age, q.live, q.initial, tc.live)
		}
	}
}
