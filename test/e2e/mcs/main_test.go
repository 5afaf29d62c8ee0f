// Package mcs holds the e2e tests of multi-cluster services: the MCS API's
// ServiceExport and ServiceImport, installed on the control plane and
// propagated to members with their CRDs, the exporting members'
// EndpointSlices collected, and the importing member's derived Service with
// them, against real members. member1 and member2 are Push members; member3
// is a Pull member (pullMember3), reached only through its flotilla-agent:
// it imports in the seed's flow and provides in TestPullMemberProvides.
package mcs

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "mcs", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			// The CRDs a test propagates show in the Clusters' APIs within
			// seconds, and a stopped member is NotReady after six.
			"--cluster-status-update-frequency=2s", "-v=2",
			"--cluster-failure-threshold=6s",
		}},
	}, "member1", "member2")
}
