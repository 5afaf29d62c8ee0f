// Package propagation holds the e2e tests of the propagation pipeline:
// scenarios S2 to S5 of SCENARIOS.md against real member clusters.
package propagation

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "propagation", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s",
		}},
	}, "member1", "member2")
}
