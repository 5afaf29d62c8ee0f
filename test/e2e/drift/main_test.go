// Package drift holds the e2e tests of drift detection: a member object
// someone changed in the fields Flotilla applied is reported on its Work
// (the fields with both values, the Drifted condition), in events on the
// Work and the resource template and in a metric, and written back, as
// Karmada writes it back; the apply modes and take-over that leave it or
// hold changes back; flotillactl drift and get's DRIFT column; against
// real members.
package drift

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "drift", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{},
	}, "member1", "member2")
}
