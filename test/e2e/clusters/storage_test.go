package clusters

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestStorageShape checks, on flotilla-apiserver's /metrics, how its
// storage is read: each case lists what is wrong in the samples.
func TestStorageShape(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(ss framework.Samples) []string
	}{{
		// The member hub, search and the embedded controllers (leading, so
		// running) read the storage in process, through one informer per
		// resource: one in-process watch of clusters (which the hub, search
		// and the controllers share), of search's ResourceRegistries, of
		// bindings, of Works and of policies, and none over HTTP.
		name: "one in-process watch per resource",
		check: func(ss framework.Samples) []string {
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
			return problems
		},
	}, {
		// Works and bindings are served straight from etcd (their only
		// watchers are informers that keep every object already), the other
		// resources from a watch cache, which counts its initialization.
		name: "Works and bindings without a watch cache",
		check: func(ss framework.Samples) []string {
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
			return problems
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
				ss, err := framework.FlotillaMetrics(ctx, t)
				if err != nil {
					return err.Error()
				}
				return strings.Join(tc.check(ss), "; ")
			})
		})
	}
}
