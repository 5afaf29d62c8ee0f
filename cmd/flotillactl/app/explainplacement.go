package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/explain"
)

// newExplainPlacementCommand returns explain-placement: where a template
// runs and why not elsewhere.
func newExplainPlacementCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "explain-placement (TYPE NAME | TYPE/NAME) [-o yaml|json]",
		Short: "Explain where a resource template runs and why not on the other clusters",
		Long: `Explain the placement of a resource template: for every cluster, whether it
runs there (with its replicas) and, when not, the first reason the
scheduler's algorithm gives, as a reason (APINotEnabled, TaintNotTolerated,
Cordoned, ClusterAffinityNotMatched, SpreadConstraint, InsufficientReplicas,
Evicting, WorkloadAffinity, QuotaExceeded, NotSelected, ClusterDeleting) and
in words; with the available replicas of the clusters that pass the filters,
the static weights, and how the replicas are divided.

It reads the explain subresource of the template's ResourceBinding (or
ClusterResourceBinding), computed on the control plane by the scheduler's
own algorithm over the clusters as they are now; nothing is written.`,
		Example: fmt.Sprintf(`  # Where deployment nginx runs, and why not elsewhere
  %[1]s explain-placement deployment/nginx -n default

  # The same as YAML (the PlacementExplanation object)
  %[1]s explain-placement deployment nginx -o yaml`, self),
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := explain.Get(cmd.Context(), cp.config, args)
			if err != nil {
				return err
			}
			return explain.Print(cmd.OutOrStdout(), e, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: yaml or json (the PlacementExplanation).")
	return cmd
}
