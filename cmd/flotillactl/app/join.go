package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/membership"
)

// newJoinCommand returns join; self is how the user runs this binary, for examples.
func newJoinCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := membership.NewJoinOptions()
	cmd := &cobra.Command{
		Use:   "join CLUSTER_NAME --cluster-kubeconfig=<KUBECONFIG>",
		Short: "Register a cluster with the control plane in Push mode",
		Long: `Register a cluster with the control plane in Push mode, as karmadactl join does.

In the member cluster, in namespace --cluster-namespace: ServiceAccount
karmada-<name> bound to ClusterRole karmada-controller-manager:karmada-<name>
(everything), ServiceAccount karmada-impersonator, and a token Secret for each.
In the control plane: Secrets <name> (token, caBundle) and <name>-impersonator
(token) in --cluster-namespace, owned by the Cluster <name>, which points at them.

Running join again changes only what differs.

Once joined (karmadactl's "cluster(<name>) is joined successfully" on stdout),
join waits up to --wait for the Cluster to be Ready, printing on stderr each
state of its Ready condition. --wait=0 returns at once, as karmadactl join
does. Not Ready in time is a warning, or an error (exit 1) when --wait was
given.`,
		Example: fmt.Sprintf(`  # Join the cluster of the current context of member1.config as member1
  %[1]s join member1 --cluster-kubeconfig=member1.config

  # Preview without writing anything
  %[1]s join member1 --cluster-kubeconfig=members.config --cluster-context=member1 --dry-run`, self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			o.SetProvider, o.SetRegion, o.SetZones = fs.Changed("cluster-provider"), fs.Changed("cluster-region"), fs.Changed("cluster-zones")
			o.Ready.Required = fs.Changed("wait")
			return o.Run(cmd.Context(), cp.config, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.ClusterKubeconfig, "cluster-kubeconfig", o.ClusterKubeconfig, "Path of the member cluster's kubeconfig (required).")
	fs.StringVar(&o.ClusterContext, "cluster-context", o.ClusterContext, "Context of the member in --cluster-kubeconfig. Default: the context named like the cluster if there is one, else the current context.")
	fs.StringVar(&o.ClusterNamespace, "cluster-namespace", o.ClusterNamespace, "Namespace, in the member and in the control plane, holding the member's credentials.")
	fs.StringVar(&o.ClusterProvider, "cluster-provider", o.ClusterProvider, "Provider of the cluster (spec.provider), for spreading workloads across providers.")
	fs.StringVar(&o.ClusterRegion, "cluster-region", o.ClusterRegion, "Region of the cluster (spec.region), for spreading workloads across regions.")
	fs.StringSliceVar(&o.ClusterZones, "cluster-zones", o.ClusterZones, "Zones of the cluster (spec.zones), comma-separated, for spreading workloads across zones.")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Only print what would change; read but write nothing.")
	fs.Var(waitValue{enabled: &o.Ready.Enabled, timeout: &o.Ready.Timeout}, "wait",
		"How long to wait for the joined Cluster to be Ready, with progress on stderr (a duration); 0 or false: return once joined.")
	fs.BoolVar(&o.Force, "force", o.Force, "Take over a Cluster of that name registered for another member (other id) or in Pull mode, or register a member already registered under another name.")
	return cmd
}
