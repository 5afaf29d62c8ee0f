package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/taint"
)

// newTaintCommand returns taint (of clusters only, as karmadactl taint).
func newTaintCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := &taint.Options{}
	cmd := &cobra.Command{
		Use:   "taint clusters NAME... KEY_1=VAL_1:TAINT_EFFECT_1 ... KEY_N=VAL_N:TAINT_EFFECT_N",
		Short: "Update the taints of one or more clusters",
		Long: `Update the taints (spec.taints) of one or more clusters, with kubectl taint's syntax.

  * A taint is key=value:effect; the value is optional (key:effect).
  * The key is a qualified name (optionally prefixed by a DNS subdomain and '/').
  * The value is a label value.
  * The effect is NoSchedule, PreferNoSchedule or NoExecute.
  * A trailing '-' removes: key:effect- removes that taint, key- every taint with that key.`,
		Example: fmt.Sprintf(`  # Taint cluster member1; a taint with that key and effect must not exist unless --overwrite
  %[1]s taint clusters member1 dedicated=special-user:NoSchedule

  # Remove the taint with key dedicated and effect NoSchedule
  %[1]s taint clusters member1 dedicated:NoSchedule-

  # Remove every taint with key dedicated
  %[1]s taint clusters member1 dedicated-`, self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), cp.config, args, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&o.Overwrite, "overwrite", o.Overwrite, "Replace taints that have the same key and effect; without it such taints are an error.")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", o.DryRun, "Only print what would change.")
	return cmd
}
