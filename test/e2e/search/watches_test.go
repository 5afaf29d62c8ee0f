package search

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestOneWatchPerKindPerMember (issue 22): with samples/s7-search.yaml
// applied, as `make up` does, flotilla-apiserver holds one watch per
// (kind, member): the search cache's pods and nodes serve the member hub
// (cluster status, the scheduler's estimate, FederatedHPA, metrics) too,
// and nothing else watches them again.
func TestOneWatchPerKindPerMember(t *testing.T) {
	root, err := env.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(root, "samples", "s7-search.yaml")
	if out, err := framework.Kubectl(t, "apply", "-f", sample); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = framework.Kubectl(t, "delete", "--ignore-not-found", "-f", sample) })
	waitRegistryReady(t, "deployments-pods-nodes")

	members := []string{"member1", "member2"}
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		ss, err := framework.FlotillaMetrics(ctx, t)
		if err != nil {
			return err.Error()
		}
		open := map[string]float64{}
		for _, s := range ss {
			if s.Name == "flotilla_member_watches" && slices.Contains(members, s.Labels["cluster"]) && s.Value != 0 {
				open[s.Labels["cluster"]+"/"+s.Labels["resource"]] = s.Value
			}
		}
		var problems []string
		for _, m := range members {
			for _, r := range []string{"pods", "nodes", "deployments.apps"} {
				if open[m+"/"+r] != 1 {
					problems = append(problems, fmt.Sprintf("%s/%s: %v watches, want 1", m, r, open[m+"/"+r]))
				}
			}
		}
		for k, v := range open {
			if v > 1 {
				problems = append(problems, fmt.Sprintf("%s: %v watches", k, v))
			}
		}
		slices.Sort(problems)
		return strings.Join(problems, "; ")
	})
}
