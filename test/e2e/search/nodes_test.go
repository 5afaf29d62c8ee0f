package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestNodeNamesItsCluster: nodes are named apart across members, as in a
// real fleet, so a node read by name through search/cache is one node, of
// one cluster, which its cached-from-cluster annotation names; the list of
// the cache's nodes holds every member's own nodes, each once.
func TestNodeNamesItsCluster(t *testing.T) {
	framework.ApplySample(t, "search.yaml")
	waitRegistryReady(t, "deployments-pods-nodes")
	var want []string
	for _, m := range []string{"member1", "member2"} {
		for _, name := range framework.Member(t, m).Nodes {
			want = append(want, m+"/"+name)
			framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
				body, err := raw(ctx, adminConfig(t), searchPrefix+"cache/api/v1/nodes/"+name)
				if err != nil {
					return fmt.Sprintf("get node %s: %v: %s", name, err, body)
				}
				var n item
				if err := json.Unmarshal(body, &n); err != nil {
					return err.Error()
				}
				if got := n.Metadata.Annotations[searchv1alpha1.CachedFromClusterAnnotation]; n.Metadata.Name != name || got != m {
					return fmt.Sprintf("node %s found as %s of cluster %q, want of %s", name, n.Metadata.Name, got, m)
				}
				return ""
			})
		}
	}
	slices.Sort(want)
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		got := names(getList(t, ctx, searchPrefix+"cache/api/v1/nodes").Items)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("the cache's nodes are %v, want %v", got, want)
		}
		return ""
	})
}
