package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/version"
)

// newVersionCommand returns version: this binary's version, as karmadactl
// version prints it, and the control plane's.
func newVersionCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var clientOnly bool
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client and control plane version information",
		Example: fmt.Sprintf(`  # Print the client and control plane versions
  %[1]s version

  # Print the client version only, without contacting the control plane
  %[1]s version --client`, self),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return version.Run(cp.config, self, clientOnly, output, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "If true, shows client version only (no server required).")
	cmd.Flags().StringVarP(&output, "output", "o", "", "One of 'yaml' or 'json'.")
	return cmd
}
