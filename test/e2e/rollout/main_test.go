// Package rollout holds the e2e tests of staged rollouts: a template change
// reaching member1, member2 and member3 stage by stage as a RolloutStrategy
// says, halting on an unhealthy stage with the later members untouched,
// recovering by a fix, waiting for approval, undone, and resumed after
// flotilla-apiserver is killed mid-stage, against real members.
package rollout

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "rollout", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s", "-v=2",
			// A stopped member is NotReady after this (30s by default).
			"--cluster-failure-threshold=6s",
		}},
	}, "member1", "member2", "member3")
}
