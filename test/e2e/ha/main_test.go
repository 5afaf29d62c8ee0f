// Package ha holds the e2e tests of flotilla-apiserver in HA mode (issue
// 23): two replicas on a three-member etcd cluster, balanced by the host's
// aggregator, the controllers in the replica holding the lease. Replicas
// and etcd members are killed with SIGKILL while clients keep working.
package ha

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// The controllers' election, passed to the replicas (Karmada's defaults).
const (
	leaseDuration = 15 * time.Second
	retryPeriod   = 2 * time.Second
)

// noHA says why the suite cannot run here ("" when it can).
var noHA string

func TestMain(m *testing.M) {
	if _, err := env.HostIPv4(); err != nil {
		noHA = err.Error()
		fmt.Fprintln(os.Stderr, "e2e ha: skipping every test:", noHA)
		os.Exit(m.Run())
	}
	framework.Main(m, "ha", env.Options{
		Members: []env.MemberOptions{
			{Name: "member1", Nodes: env.NodeOptions{Count: 1}},
			{Name: "member2", Nodes: env.NodeOptions{Count: 1}},
			// Registered in Pull mode by the test that needs it.
			{Name: "member3", Nodes: env.NodeOptions{Count: 1}},
		},
		Flotilla: &env.FlotillaOptions{Args: []string{"--cluster-status-update-frequency=2s",
			"--leader-elect-lease-duration=" + leaseDuration.String(), "--leader-elect-retry-period=" + retryPeriod.String()}},
		HA: &env.HAOptions{Replicas: 2, EtcdMembers: 3},
	}, "member1", "member2")
}

// requireHA skips a test on a machine the HA environment cannot run on.
func requireHA(t *testing.T) {
	t.Helper()
	if noHA != "" {
		t.Skip(noHA)
	}
}
