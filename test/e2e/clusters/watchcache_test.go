package clusters

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestWorksAndBindingsWithoutWatchCache: flotilla-apiserver
// serves Works and bindings straight from etcd by default (their only
// watchers are informers that keep every object already), and the other
// resources from a watch cache. A watch cache counts its initialization in
// apiserver_watch_cache_initializations_total.
func TestWorksAndBindingsWithoutWatchCache(t *testing.T) {
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		ss, err := framework.FlotillaMetrics(ctx, t)
		if err != nil {
			return err.Error()
		}
		inits := func(group, resource string) float64 {
			return ss.Sum("apiserver_watch_cache_initializations_total", func(l map[string]string) bool {
				return l["group"] == group && l["resource"] == resource
			})
		}
		var problems []string
		for _, r := range []string{"works", "resourcebindings", "clusterresourcebindings"} {
			if n := inits("work.karmada.io", r); n != 0 {
				problems = append(problems, fmt.Sprintf("%s.work.karmada.io: watch cache initialized %v times, want none", r, n))
			}
		}
		for _, gr := range [][2]string{{"policy.karmada.io", "propagationpolicies"}, {"cluster.karmada.io", "clusters"}} {
			if n := inits(gr[0], gr[1]); n < 1 {
				problems = append(problems, fmt.Sprintf("%s.%s: no watch cache", gr[1], gr[0]))
			}
		}
		return strings.Join(problems, "; ")
	})
}
