// Command flotillactl registers member clusters with a Flotilla control plane
// and manages them (join, unjoin, taint, cordon; token, register and
// unregister for Pull mode), and runs interpreter
// customizations locally (interpret). Installed as kubectl-flotilla it is
// also the kubectl plugin "kubectl flotilla". Package app declares the
// commands; the packages under cli/ do their work.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/flotilla-io/flotilla/cmd/flotillactl/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	invokedAs := filepath.Base(os.Args[0])
	err := app.Execute(ctx, app.NewCommand(invokedAs), app.CompletionArgs(invokedAs, os.Args[1:]))
	stop()
	if err != nil {
		os.Exit(1)
	}
}
