// Package propagation holds the e2e tests of the propagation pipeline:
// weighted division, placement variants, CRDs and dependencies, overrides
// and the Lua interpreter (as in samples/) against real member clusters.
package propagation

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "propagation", env.Options{
		// Different capacities so dynamic division has something to weigh:
		// member1 64 CPUs, member2 32.
		Members: []env.MemberOptions{
			{Name: "member1", Nodes: env.NodeOptions{Count: 2, CPU: "32"}},
			{Name: "member2", Nodes: env.NodeOptions{Count: 1, CPU: "32"}},
		},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s", "-v=2",
		}},
	}, "member1", "member2")
}
