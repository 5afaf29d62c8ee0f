// Package install is the e2e suite of installing Flotilla into a host
// cluster: the chart charts/flotilla applied with server-side dry run,
// and `flotillactl init` / `deinit`. The host runs no flotilla-apiserver
// (init makes the APIServices it would register) and no container
// runtime, so nothing the chart makes ever runs.
package install

import (
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

func TestMain(m *testing.M) {
	framework.Main(m, "install", env.Options{})
}
