package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/cli/membership"
	"github.com/flotilla-io/flotilla/names"
)

func newUnjoinCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := membership.NewUnjoinOptions()
	cmd := &cobra.Command{
		Use:   "unjoin CLUSTER_NAME [--cluster-kubeconfig=<KUBECONFIG>]",
		Short: "Remove a cluster from the control plane and what join created in it",
		Long: `Remove a cluster from the control plane, as karmadactl unjoin does.

Deletes the Cluster and, once it is gone, its two credential Secrets on the
control plane. With --cluster-kubeconfig it then deletes, in the member, the
objects join (flotillactl's or karmadactl's) created there, by their names,
which embed the cluster's: the ServiceAccount karmada-<name>, its token
Secret, ClusterRole and ClusterRoleBinding; the impersonator ServiceAccount
and Secret once no other join of the member uses them; the namespace only
if join created it (labelled ` + names.ManagedByLabel + `=` + controlplane.UserAgent + `).
Objects that are already gone are not errors. A Cluster in Pull mode (use
unregister), or one whose id is not the member's, is refused unless --force.`,
		Example:               fmt.Sprintf("  %s unjoin member1 --cluster-kubeconfig=member1.config", self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.Run(cmd.Context(), cp.config, args, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.ClusterKubeconfig, "cluster-kubeconfig", o.ClusterKubeconfig, "Path of the member cluster's kubeconfig. Without it the member is left as it is.")
	fs.StringVar(&o.ClusterContext, "cluster-context", o.ClusterContext, "Context of the member in --cluster-kubeconfig. Default: the context named like the cluster if there is one, else the current context.")
	fs.StringVar(&o.ClusterNamespace, "cluster-namespace", o.ClusterNamespace, "Namespace, in the member and in the control plane, holding the member's credentials.")
	addWaitFlags(fs, &o.Wait, &o.Timeout, "for the Cluster to be gone before deleting its credentials, so the control plane can still clean up the member")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Only print what would be deleted; read but write nothing.")
	fs.BoolVar(&o.Force, "force", o.Force, "Unjoin even if the member's kube-system uid is not the id of the Cluster, or the Cluster is in Pull mode.")
	return cmd
}
