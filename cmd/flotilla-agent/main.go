// Command flotilla-agent runs next to a member cluster in Pull mode: it
// applies the member's Works, reports its status and heartbeat, for that
// member alone (see package agent).
package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/flotilla-io/flotilla/agent"
)

func main() {
	os.Exit(cli.Run(newCommand()))
}

func newCommand() *cobra.Command {
	o := agent.NewOptions()
	logOpts := logs.NewOptions()
	cmd := &cobra.Command{
		Use:   "flotilla-agent",
		Short: "Apply a pull member's Works and report its status, for that member alone",
		Long: "flotilla-agent applies the Works of a pull member, reports its status and heartbeat, and keeps the tunnel " +
			"through which the control plane reaches the member. It renews its control-plane certificate before it " +
			"expires; SIGUSR1 renews it at once.",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := logsapi.ValidateAndApply(logOpts, nil); err != nil {
				return err
			}
			cfg, err := o.Config()
			if err != nil {
				return err
			}
			return cfg.Run(cmd.Context())
		},
	}
	o.AddFlags(cmd.Flags())
	logsapi.AddFlags(logOpts, cmd.Flags())
	return cmd
}
