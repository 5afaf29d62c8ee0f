package member

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

func TestHasPodsAndNodes(t *testing.T) {
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web-1", Labels: map[string]string{"app": "web"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "db-1", Labels: map[string]string{"app": "db"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "api-1", Labels: map[string]string{"app": "api"}}},
	} {
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	nodes := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := nodes.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "z1"}}}); err != nil {
		t.Fatal(err)
	}
	empty := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	synced := Member{Synced: true, podIndex: pods, nodeIndex: nodes}
	for _, tc := range []struct {
		name      string
		m         Member
		namespace string
		selector  string
		want      bool
	}{
		{"namespace and label", synced, "a", "app=web", true},
		{"label in another namespace", synced, "a", "app=api", false},
		{"all namespaces", synced, "", "app=api", true},
		{"everything in a namespace", synced, "b", "", true},
		{"empty namespace", synced, "c", "", false},
		{"set selector", synced, "a", "app in (db,cache)", true},
		{"no pods at all", Member{Synced: true, podIndex: empty, nodeIndex: nodes}, "", "", false},
		{"not synced cannot tell", Member{podIndex: empty, nodeIndex: nodes}, "a", "app=none", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := labels.Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.m.HasPods(tc.namespace, sel); got != tc.want {
				t.Errorf("HasPods(%q, %q) = %v, want %v", tc.namespace, tc.selector, got, tc.want)
			}
		})
	}
	for sel, want := range map[string]bool{"zone=z1": true, "zone=z2": false, "": true} {
		s, _ := labels.Parse(sel)
		if got := synced.HasNodes(s); got != want {
			t.Errorf("HasNodes(%q) = %v, want %v", sel, got, want)
		}
	}
}

// startMember runs a member's informers on cl under ctx, as the hub does
// for a Ready member.
func startMember(ctx context.Context, s *Hub, name string, cl *Client) *member {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runCtx = ctx
	return s.members.Ensure(name, cl)
}
