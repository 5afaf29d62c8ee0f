// Command flotilla-apiserver serves every karmada.io API from its own
// storage, as an extension API server behind the host's aggregator.
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/flotilla-io/flotilla/cmd/flotilla-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewCommand()))
}
