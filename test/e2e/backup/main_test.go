// Package backup holds the e2e test of backup and restore: the control
// plane's etcd saved with flotillactl backup, wiped, restored with
// flotillactl restore, and flotilla-apiserver restarted on it.
package backup

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "backup", env.Options{
		Members: []env.MemberOptions{
			{Name: "member1", Nodes: env.NodeOptions{Count: 1, CPU: "32"}},
			{Name: "member2", Nodes: env.NodeOptions{Count: 1, CPU: "32"}},
		},
		Flotilla: &env.FlotillaOptions{Args: []string{"--cluster-status-update-frequency=2s", "-v=2"}},
	}, "member1", "member2")
}
