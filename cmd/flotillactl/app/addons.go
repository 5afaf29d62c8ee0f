package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/addons"
)

func newAddonsCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "addons",
		Short: "List karmadactl's addons and what serves them here (they are built into flotilla-apiserver)",
		Long: `karmadactl installs the descheduler, metrics adapter, scheduler estimator and
search as addons. Flotilla builds them into flotilla-apiserver: "addons list"
shows, for each, whether what serves it is Available; enable and disable
explain how each is turned on or off.`,
	}
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the addons and their status",
		Example: fmt.Sprintf("  %s addons list", self),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return addons.List(cmd.Context(), cp.config, cmd.OutOrStdout())
		},
	}
	toggle := func(verb string) *cobra.Command {
		return &cobra.Command{
			Use:   verb + " ADDON",
			Short: "Explain how to " + verb + " an addon (built into flotilla-apiserver)",
			Args:  cobra.ExactArgs(1),
			RunE:  func(_ *cobra.Command, args []string) error { return addons.Toggle(verb, args[0]) },
		}
	}
	cmd.AddCommand(list, toggle("enable"), toggle("disable"))
	return cmd
}
