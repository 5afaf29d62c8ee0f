package search

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// hubPods is how many pods the member hub benchmark creates
// (FLOTILLA_BENCH_HUB_PODS).
func hubPods() int {
	if n, err := strconv.Atoi(os.Getenv("FLOTILLA_BENCH_HUB_PODS")); err == nil && n > 0 {
		return n
	}
	return 30_000
}

const hubNamespace = "hub"

// TestMemberHubMemory: what flotilla-apiserver keeps per member
// pod outside the search cache (no ResourceRegistry here): the member
// hub's pods, read by cluster status, the scheduler's estimate,
// FederatedHPA and the metrics adapter. Live heap after a forced GC, with
// the pods created in the members against before, over the pod count.
func TestMemberHubMemory(t *testing.T) {
	n := hubPods()
	host := config(t, framework.Env.Host)
	k := versioned.NewForConfigOrDie(host)
	memberCS := map[string]kubernetes.Interface{}
	for _, m := range members {
		memberCS[m] = kubernetes.NewForConfigOrDie(config(t, framework.Member(t, m)))
		ensureNamespaces(t, memberCS[m], hubNamespace)
	}
	// The pods go with the test (unbound, they are deleted at once), so
	// that the search benchmark counts only its own.
	t.Cleanup(func() {
		for _, m := range members {
			if err := memberCS[m].CoreV1().Pods(hubNamespace).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				t.Errorf("deleting the pods of %s/%s: %v", m, hubNamespace, err)
			}
		}
	})
	allocating := func(ctx context.Context) (int64, error) {
		var sum int64
		for _, m := range members {
			c, err := k.ClusterV1alpha1().Clusters().Get(ctx, m, metav1.GetOptions{})
			if err != nil {
				return 0, err
			}
			if rs := c.Status.ResourceSummary; rs != nil {
				if q, ok := rs.Allocating[corev1.ResourcePods]; ok {
					sum += q.Value()
				}
			}
		}
		return sum, nil
	}
	waitQuiet(t, time.Minute)
	before, err := allocating(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	heap0, rss0 := liveHeap(t), settledRSS(t, 10*time.Second)

	start := time.Now()
	for i, m := range members {
		share := n / len(members)
		if i == 0 {
			share += n % len(members)
		}
		createPods(t, memberCS[m], share, 5_000_000+i*n, hubNamespace)
	}
	created := time.Since(start)
	// The pods name a scheduler that does not run: unbound, they are what
	// each cluster's resourceSummary calls allocating, counted from the hub.
	var got int64
	if err := wait.PollUntilContextTimeout(t.Context(), time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err = allocating(ctx)
		return err == nil && got-before >= int64(n), nil
	}); err != nil {
		t.Fatalf("the clusters' status counts %d allocating pods, want %d more than %d", got, n, before)
	}
	held := time.Since(start)
	waitQuiet(t, time.Minute)
	heap1, rss1 := liveHeap(t), settledRSS(t, 10*time.Second)
	record(t, fmt.Sprintf("\n== member hub benchmark, %s: %d pods created in %s, %s and %s in %.1f s, in the clusters' status after %.1f s\n"+
		"live heap after a forced GC %.0f → %.0f MiB: %.0f bytes per member pod outside search (goal ≤ 1024); RSS %.0f → %.0f MiB: %.0f bytes per pod\n",
		time.Now().UTC().Format(time.RFC3339), n, members[0], members[1], members[2], created.Seconds(), held.Seconds(),
		mib(heap0), mib(heap1), float64(heap1-heap0)/float64(n), mib(rss0), mib(rss1), float64(rss1-rss0)/float64(n)))
}
