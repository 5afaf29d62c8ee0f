// Package worker runs the informer → rate-limited queue → reconcile loop
// every controller shares.
package worker

import (
	"context"
	"sync"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Run waits for the caches, then runs workers that reconcile keys from
// queue until ctx ends; a failed key is retried with backoff. It shuts the
// queue down on return.
func Run(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], synced []cache.InformerSynced, workers int, reconcile func(context.Context, string) error) {
	defer utilruntime.HandleCrash()
	defer queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for processNext(ctx, queue, reconcile) {
				}
			}, time.Second)
		})
	}
	<-ctx.Done()
	// Workers waiting in Get return only once the queue is shut down.
	queue.ShutDown()
	wg.Wait()
}

func processNext(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string], reconcile func(context.Context, string) error) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	if err := reconcile(ctx, key); err != nil {
		klog.FromContext(ctx).Error(err, "Reconciling failed; retrying", "key", key)
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}

// EnqueueKey returns an event handler function adding an object's key.
func EnqueueKey(queue workqueue.TypedRateLimitingInterface[string]) func(any) {
	return func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			queue.Add(key)
		}
	}
}
