package clusters

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestOneClusterWatchOverLoopback: the member hub, search and
// the embedded controllers (leading, so running) read the Clusters of one
// informer, so flotilla-apiserver's loopback clients hold one watch of
// clusters, not one each; search's ResourceRegistries come from the same
// factory, watched once too.
func TestOneClusterWatchOverLoopback(t *testing.T) {
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		ss, err := framework.FlotillaMetrics(ctx, t)
		if err != nil {
			return err.Error()
		}
		var problems []string
		for _, r := range []string{"clusters.cluster.karmada.io", "resourceregistries.search.karmada.io"} {
			n := ss.Sum("flotilla_loopback_watches", func(l map[string]string) bool { return l["resource"] == r })
			if n != 1 {
				problems = append(problems, fmt.Sprintf("%s: %v loopback watches, want 1", r, n))
			}
		}
		return strings.Join(problems, "; ")
	})
}
