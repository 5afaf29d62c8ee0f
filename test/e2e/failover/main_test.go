// Package failover holds the e2e tests of failover: workloads leaving
// clusters (NoExecute taints, graceful eviction), the descheduler moving
// replicas their members cannot schedule, and Remedies setting clusters'
// status.remedyActions, against real members.
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
			// The descheduler (off by default) looks every 3s (2m by
			// default) for pods unschedulable for 5s (5m by default). Only
			// dynamically divided bindings are descheduled: the other
			// tests' placements use static weights.
			"--controllers=*,descheduler", "--descheduling-interval=3s", "--unschedulable-threshold=5s",
		}},
	}, "member1", "member2")
}
