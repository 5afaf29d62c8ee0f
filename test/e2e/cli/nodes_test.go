package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestGetNodesNameTheirCluster: nodes are named apart across members, as
// in a real fleet, so flotillactl get nodes -s members prints each node of
// each member once, on a row whose CLUSTER is its member, and a get of one
// node by name prints that member's row alone.
func TestGetNodesNameTheirCluster(t *testing.T) {
	members := []string{"member1", "member2", "member3"}
	framework.Eventually(t, time.Minute, func(context.Context) string {
		out, errOut, err := getRun(t, "", "get", "nodes", "-s", "members")
		if err != nil {
			return fmt.Sprintf("get nodes -s members: %v\n%s\n%s", err, out, errOut)
		}
		clusterOf := map[string][]string{}
		for _, r := range getTable(t, out) {
			clusterOf[r["NAME"]] = append(clusterOf[r["NAME"]], r["CLUSTER"])
		}
		var problems []string
		for _, m := range members {
			for _, name := range framework.Member(t, m).Nodes {
				if got := clusterOf[name]; len(got) != 1 || got[0] != m {
					problems = append(problems, fmt.Sprintf("node %s on rows of clusters %v, want one row of %s", name, got, m))
				}
			}
		}
		if len(problems) > 0 {
			return strings.Join(problems, "; ") + "\n" + out
		}
		return ""
	})
	for _, m := range members {
		name := framework.Member(t, m).Nodes[0]
		out, errOut := getMustRun(t, "", "get", "node", name, "--operation-scope=members")
		rows := getTable(t, out)
		if len(rows) != 1 || rows[0]["NAME"] != name || rows[0]["CLUSTER"] != m {
			t.Errorf("get node %s --operation-scope=members: rows %v, want one row of %s\n%s", name, rows, m, out)
		}
		for _, other := range members {
			if other != m && !strings.Contains(errOut, "warning: cluster "+other+" skipped: NotFound") {
				t.Errorf("get node %s: stderr %q, want a NotFound warning naming %s", name, errOut, other)
			}
		}
	}
}
