// Package console is the e2e suite of the web console: `flotillactl
// console` served against the test bed and driven in headless Chromium
// (Debian's chromium, which hack/chromium.sh installs), with screenshots
// of each page in _output/console/.
package console

import (
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// chromium is the browser's path; noBrowser says why there is none.
var chromium, noBrowser string

func TestMain(m *testing.M) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		noBrowser = "no Chromium on this machine: hack/chromium.sh installs Debian's (make test-e2e runs it)"
		fmt.Fprintln(os.Stderr, "e2e console: skipping every test:", noBrowser)
		os.Exit(m.Run())
	}
	framework.Main(m, "console", env.Options{
		Members: []env.MemberOptions{{Name: "member1"}, {Name: "member2"}},
		Flotilla: &env.FlotillaOptions{Args: []string{
			// Short periods so a stopped member turns NotReady in seconds.
			"--cluster-status-update-frequency=2s", "--cluster-failure-threshold=4s",
		}},
	}, "member1", "member2")
}
