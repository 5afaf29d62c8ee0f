// Package watchers is the e2e suite of many watchers: hundreds of watches
// through clusters/{name}/proxy and search's proxying endpoint at once,
// each receiving a steady stream of changes from real members, and clients
// that stop reading, which flotilla-apiserver cuts off.
package watchers

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "watchers", env.Options{
		Members:  []env.MemberOptions{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}},
		Flotilla: &env.FlotillaOptions{Args: []string{"-v=2"}},
	}, "member1", "member2", "member3")
}
