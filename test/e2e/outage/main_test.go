// Package outage holds the e2e test of a long member outage: member2's
// kube-apiserver stopped for ten minutes (FLOTILLA_OUTAGE=<duration> for
// another length) and started again, with workloads that tolerate its
// absence and workloads that fail over after 60 s, against real members
// and the control plane's default timings.
package outage

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "outage", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"-v=2",
			// Evicting for NoExecute taints is off by default, as in
			// Karmada; every other timing is the default one.
			"--enable-no-execute-taint-eviction",
		}},
	}, "member1", "member2", "member3")
}
