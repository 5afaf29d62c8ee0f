package clusterproxy

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// Bind makes cmd (a kubectl command built over f) and its subcommands
// choose their target from flags before they run: the control plane, or
// the member flags name, whose name then prefixes the errors kubectl
// prints.
func Bind(cmd *cobra.Command, f *Factory, flags *Flags) {
	target := func(c *cobra.Command, _ []string) error {
		cluster, err := flags.Target()
		if err != nil {
			return err
		}
		if err := f.Use(c.Context(), cluster); err != nil {
			return err
		}
		if cluster != "" {
			nameClusterOnFatal(cluster)
		}
		return nil
	}
	var bind func(c *cobra.Command)
	bind = func(c *cobra.Command) {
		prev, prevE := c.PreRun, c.PreRunE
		c.PreRun = nil
		c.PreRunE = func(c *cobra.Command, args []string) error {
			if err := target(c, args); err != nil {
				return err
			}
			if prevE != nil {
				return prevE(c, args)
			}
			if prev != nil {
				prev(c, args)
			}
			return nil
		}
		for _, sub := range c.Commands() {
			bind(sub)
		}
	}
	bind(cmd)
}

// nameClusterOnFatal makes kubectl's commands, which print their errors
// and exit through cmdutil.CheckErr, name cluster in what they print.
// cmdutil.BehaviorOnFatal is kubectl's process-wide hook for this; a
// command line tool runs one command per process.
func nameClusterOnFatal(cluster string) {
	cmdutil.BehaviorOnFatal(func(msg string, code int) {
		if msg != "" {
			msg = NameCluster(msg, cluster)
			if !strings.HasSuffix(msg, "\n") {
				msg += "\n"
			}
			fmt.Fprint(os.Stderr, msg)
		}
		os.Exit(code)
	})
}

// NameCluster puts "cluster(NAME): " into an error message kubectl
// formatted, after its "error: " or "Error from server (Reason): " lead,
// as karmadactl names the member of an error.
func NameCluster(msg, cluster string) string {
	if msg == "" {
		return msg
	}
	tag := "cluster(" + cluster + "): "
	if strings.HasPrefix(msg, "error: ") {
		return "error: " + tag + strings.TrimPrefix(msg, "error: ")
	}
	if strings.HasPrefix(msg, "Error from server") {
		if i := strings.Index(msg, "): "); i >= 0 && !strings.Contains(msg[:i], "\n") {
			return msg[:i+3] + tag + msg[i+3:]
		}
		if i := strings.Index(msg, ": "); i >= 0 && !strings.Contains(msg[:i], "\n") {
			return msg[:i+2] + tag + msg[i+2:]
		}
	}
	return tag + msg
}
