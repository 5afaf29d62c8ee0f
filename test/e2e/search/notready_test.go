package search

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestClusterNotReady: a cluster going NotReady drops its objects from
// the cache and ends the watches across it (clients watch again and see the
// remaining cluster); when it is back, so are its objects. It runs last
// (file name) because it stops member2's API server.
func TestClusterNotReady(t *testing.T) {
	setup(t)
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(through(adminConfig(t)))
	w, err := cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	restart := framework.StopMember(t, "member2")
	deployments := searchPrefix + "cache/apis/apps/v1/namespaces/" + ns + "/deployments"
	waitList(t, deployments, []string{"member1/shared", "member1/web"})

	// The watch across both clusters ended when member2 left the cache.
	closed := false
	timeout := time.After(30 * time.Second)
	for !closed {
		select {
		case _, ok := <-w.ResultChan():
			closed = !ok
		case <-timeout:
			t.Fatal("the watch across member1 and member2 did not end when member2 left")
		}
	}
	// A new watch from "" lists member1's objects only.
	w2, err := cs.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
loop:
	for {
		select {
		case ev, ok := <-w2.ResultChan():
			if !ok {
				t.Logf("the new watch closed")
				break loop
			}
			if ev.Object != nil {
				if m, err := metaOf(ev.Object); err == nil {
					seen = append(seen, m)
				}
			}
		case <-wctx.Done():
			break loop
		}
	}
	w2.Stop()
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"member1/shared", "member1/web"}) {
		t.Errorf("a new watch saw %v, want member1's objects only", seen)
	}

	if err := restart(); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l := getList(t, ctx, deployments)
		return len(l.Items) == 4, nil
	})
	if err != nil {
		t.Fatalf("member2's objects did not come back: %v", err)
	}
}
