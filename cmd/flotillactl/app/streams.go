package app

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// stdStreams are the process's standard streams, which kubectl's commands
// take when they are built.
func stdStreams() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// outOf writes to a command's output, as it is when the command runs (a
// test sets it after building the command).
type outOf struct{ cmd *cobra.Command }

func (o outOf) Write(p []byte) (int, error) { return o.cmd.OutOrStdout().Write(p) }

// commandStreams are the command's standard streams.
func commandStreams(cmd *cobra.Command) genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: cmd.InOrStdin(), Out: cmd.OutOrStdout(), ErrOut: cmd.ErrOrStderr()}
}
