package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	clusterclient "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/cluster/v1alpha1"
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
			name := args[0]
			if msgs := clustervalidation.ValidateClusterName(name, false); len(msgs) > 0 {
				return fmt.Errorf("invalid cluster name %q: %s", name, strings.Join(msgs, "; "))
			}
			cpc, err := cp.clients()
			if err != nil {
				return err
			}
			return runCordon(cmd.Context(), cpc.karmada.ClusterV1alpha1().Clusters(), name, cordon, dryRun, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Only print what would change.")
	return cmd
}

// runCordon adds (cordon) or removes the unschedulable taint, reporting
// "cordoned", "uncordoned" or "already ..." as kubectl does for nodes.
func runCordon(ctx context.Context, clusters clusterclient.ClusterInterface, name string, cordon, dryRun bool, out io.Writer) error {
	verb := "cordoned"
	if !cordon {
		verb = "uncordoned"
	}
	taint := unschedulableTaint()
	op, err := updateTaints(ctx, clusters, name, dryRun, func(old []corev1.Taint) ([]corev1.Taint, string, error) {
		has := indexTaint(old, taint.Key, taint.Effect) >= 0
		switch {
		case has == cordon:
			return old, "already " + verb, nil
		case cordon:
			return append(append([]corev1.Taint{}, old...), taint), verb, nil
		}
		kept := make([]corev1.Taint, 0, len(old))
		for _, t := range old {
			if !t.MatchTaint(&taint) {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		return kept, verb, nil
	})
	if err != nil {
		return fmt.Errorf("%s cluster %q: %w", strings.TrimSuffix(verb, "ed"), name, err)
	}
	// karmadactl's line, dry run or not: "<cluster> cluster cordoned".
	fmt.Fprintf(out, "%s cluster %s\n", name, op)
	return nil
}
