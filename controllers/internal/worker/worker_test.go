package worker

import (
	"context"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// TestRunReturnsWhenContextEnds: workers waiting for a key stop when the
// context ends, so a controller that loses its lease lets the process exit.
func TestRunReturnsWhenContextEnds(t *testing.T) {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	processed := make(chan string, 1)
	go func() {
		defer close(done)
		Run(ctx, queue, nil, 4, func(_ context.Context, key string) error {
			processed <- key
			return nil
		})
	}()
	queue.Add("a")
	select {
	case k := <-processed:
		if k != "a" {
			t.Fatalf("processed %q, want a", k)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the key was not processed")
	}
	// Every worker now waits in Get.
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended: idle workers still wait for keys")
	}
}
