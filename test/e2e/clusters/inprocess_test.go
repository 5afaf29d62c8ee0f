package clusters

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestOneWatchPerResourceInProcess: the member hub, search and the
// embedded controllers (leading, so running) read flotilla-apiserver's
// storage in process, through one informer per resource: one in-process
// watch of clusters (which the hub, search and the controllers share),
// of search's ResourceRegistries, of bindings and of Works, and no watch
// over the server's HTTP loopback.
func TestOneWatchPerResourceInProcess(t *testing.T) {
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		ss, err := framework.FlotillaMetrics(ctx, t)
		if err != nil {
			return err.Error()
		}
		var problems []string
		for _, r := range []string{"clusters.cluster.karmada.io", "resourceregistries.search.karmada.io",
			"resourcebindings.work.karmada.io", "works.work.karmada.io", "propagationpolicies.policy.karmada.io"} {
			n := ss.Sum("flotilla_inprocess_watches", func(l map[string]string) bool { return l["resource"] == r })
			if n != 1 {
				problems = append(problems, fmt.Sprintf("%s: %v in-process watches, want 1", r, n))
			}
		}
		if n := ss.Sum("flotilla_loopback_watches", nil); n != 0 {
			problems = append(problems, fmt.Sprintf("%v watches over the HTTP loopback, want 0", n))
		}
		return strings.Join(problems, "; ")
	})
}
