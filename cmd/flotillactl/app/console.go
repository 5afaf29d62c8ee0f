package app

import (
	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/console"
)

// newConsoleCommand returns console: the fleet in a web page, served on
// this machine as the kubeconfig's user.
func newConsoleCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var (
		address string
		port    int
		open    bool
		login   bool
	)
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Show the fleet in a web page served on this machine, as you",
		Long: `Serve a web console of the fleet on this machine: clusters and their health,
workloads and where they run, search across members and events. Every page is
read with your kubeconfig's credentials, through the control plane (members
through clusters/{name}/proxy, search and the metrics APIs), so it shows exactly
what you may see. Nothing is stored and no credentials are made.`,
		Example: `  ` + self + ` console
  ` + self + ` console --port 8001 --open
  ` + self + ` console --login --address 0.0.0.0 --port 8001   # in a pod, as the chart runs it`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return console.Run(cmd.Context(), cp.config, address, port, open, login, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&address, "address", "127.0.0.1", "The address to listen on (keep it on loopback: the console acts as you).")
	cmd.Flags().IntVar(&port, "port", 0, "The port to listen on (0: any free port).")
	cmd.Flags().BoolVar(&open, "open", false, "Open the console in the desktop's browser.")
	cmd.Flags().BoolVar(&login, "login", false, "Serve several users, each logging in with a bearer token of their own; the kubeconfig (or the pod's in-cluster configuration) gives the control plane's address and CA only, never its credentials. The chart runs the console so, behind the host's TLS.")
	return cmd
}
