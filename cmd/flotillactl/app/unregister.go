package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/membership"
	"github.com/flotilla-io/flotilla/names"
)

func newUnregisterCommand(self string) *cobra.Command {
	o := membership.NewUnregisterOptions()
	cmd := &cobra.Command{
		Use:   "unregister CLUSTER_NAME --cluster-kubeconfig=<MEMBER KUBECONFIG> [--karmada-config=<KUBECONFIG>]",
		Short: "Remove a Pull-mode cluster: its agent's credentials and objects in the member, and its Cluster",
		Long: `Remove a cluster registered in Pull mode, as karmadactl unregister does.

With --karmada-config, deletes the Cluster (the control plane then
removes its execution namespace, and with the Cluster go the agent's rights and
Lease) and waits until it is gone, then deletes the agent's RBAC at once. The
agent's own identity cannot do this: it may not delete its Cluster.

In the member (--cluster-kubeconfig): the agent's Secret, ClusterRoleBinding,
ClusterRole, ServiceAccount and, if register created it, its namespace; objects
register did not create are kept. A member whose id is not the Cluster's is
refused unless --force.`,
		Example:               fmt.Sprintf("  %s unregister member3 --cluster-kubeconfig=member3.config --karmada-config=karmada.config", self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			noteIgnored(cmd.Flags(), func(format string, a ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format, a...) })
			return o.Run(cmd.Context(), args, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	// These shadow the control-plane flags of the same names, as in register.
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path of the member cluster's kubeconfig. Default: $KUBECONFIG, else ~/.kube/config.")
	fs.StringVar(&o.Context, "context", o.Context, "Context of the member in --kubeconfig.")
	fs.StringVar(&o.ControlPlaneKubeconfig, "control-plane-kubeconfig", o.ControlPlaneKubeconfig, "Kubeconfig of the control plane, to delete the Cluster. Without it the Cluster is kept.")
	fs.StringVar(&o.ControlPlaneContext, "control-plane-context", o.ControlPlaneContext, "Context of the control plane in --control-plane-kubeconfig.")
	fs.StringVar(&o.AgentNamespace, "agent-namespace", o.AgentNamespace, "Member namespace of the agent.")
	addWaitFlags(fs, &o.Wait, &o.Timeout, "for the Cluster to be gone")
	fs.BoolVar(&o.Force, "force", o.Force, "Unregister even if the member's id is not the Cluster's, or the Cluster is in Push mode.")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Only print what would be deleted; read but write nothing.")
	fs.StringVar(&o.AgentName, "agent-name", o.AgentName, "Name of the agent's Deployment in the member.")
	// karmadactl's names of the same flags.
	alias(fs, "kubeconfig", "cluster-kubeconfig", "", false)
	alias(fs, "context", "cluster-context", "", false)
	alias(fs, "control-plane-kubeconfig", "karmada-config", "", false)
	alias(fs, "control-plane-context", "karmada-context", "", false)
	alias(fs, "agent-namespace", "namespace", "n", false)
	ignoredString(fs, "cluster-namespace", names.SecretNamespace, "a Pull member's credentials are its agent's certificate, kept in no control-plane Secret.")
	return cmd
}
