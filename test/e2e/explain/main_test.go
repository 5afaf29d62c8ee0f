// Package explain holds the e2e tests of placement explanations: the
// explain subresource of bindings, and flotillactl explain-placement,
// saying for each cluster why a template runs there or not, against real
// members.
package explain

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "explain", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{"--cluster-status-update-frequency=2s"}},
	}, "member1", "member2", "member3")
}
