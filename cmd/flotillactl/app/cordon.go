package app

import (
	"github.com/spf13/cobra"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/taint"
)

// newCordonCommand returns cordon (cordon=true) or uncordon.
func newCordonCommand(cp *controlPlaneFlags, self string, cordon bool) *cobra.Command {
	var dryRun bool
	verb, short := "cordon", "Mark a cluster unschedulable (taint "+clusterv1alpha1.TaintClusterUnschedulable+":NoSchedule)"
	if !cordon {
		verb, short = "uncordon", "Mark a cluster schedulable again (remove the "+clusterv1alpha1.TaintClusterUnschedulable+" taint)"
	}
	cmd := &cobra.Command{
		Use:                   verb + " CLUSTER_NAME",
		Short:                 short,
		Example:               "  " + self + " " + verb + " member1",
		Args:                  cobra.ExactArgs(1),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return taint.Cordon(cmd.Context(), cp.config, args[0], cordon, dryRun, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Only print what would change.")
	return cmd
}
