// Package semantics holds the e2e tests of Karmada semantics: the Karmada
// behaviours of the propagation core a Karmada user depends on beyond the
// scenarios — events, preemption, dependency conflicts — against real
// members.
package semantics

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "semantics", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			"--cluster-status-update-frequency=2s", "-v=2",
			"--multiple-pod-templates-scheduling",
			"--resource-quota-estimate",
		}},
	}, "member1", "member2")
}
