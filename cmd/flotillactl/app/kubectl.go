package app

import (
	"os"
	"strings"

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

// examples formats a command's examples: each "%[1]s" is the command line
// name (flotillactl, or kubectl flotilla), indented as cobra prints them.
func examples(self, text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" {
			l = "  " + strings.ReplaceAll(l, "%[1]s", self)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
