// Package failover holds the e2e tests of issue 24: workloads leaving
// clusters (NoExecute taints, graceful eviction) and Remedies setting
// clusters' status.remedyActions, against real members.
package failover

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "failover", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s", "-v=2",
			"--enable-no-execute-taint-eviction",
			// A stopped member is NotReady after this (30s by default).
			"--cluster-failure-threshold=6s",
			// Evictions from a not Ready cluster wait this (30s by default).
			"--unhealthy-cluster-window=12s",
		}},
	}, "member1", "member2")
}
