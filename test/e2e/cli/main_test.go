// Package cli holds the e2e tests of the CLI: flotillactl as karmadactl,
// each command run as a user runs it (the built binary, against the test
// bed's control plane and real members).
package cli

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "cli", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{"--cluster-status-update-frequency=2s", "-v=2"}},
		// TestMemberTop waits for a new pod's third scrape.
		MetricsResolution: env.MinMetricsResolution,
	}, "member1", "member2", "member3")
}
