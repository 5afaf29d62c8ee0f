package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
	"github.com/flotilla-io/flotilla/cli/promote"
)

// newPromoteCommand returns promote (karmadactl promote): an object that
// runs in a member becomes a template with a policy placing it there.
func newPromoteCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var f promote.Flags
	cmd := &cobra.Command{
		Use:   "promote <RESOURCE_TYPE> <RESOURCE_NAME> -n <NAME_SPACE> -C <CLUSTER_NAME>",
		Short: "Promote resources from legacy clusters to Karmada control plane",
		Long: `Promote resources from legacy clusters to Karmada control plane.
Requires the cluster has been joined or registered.

The object keeps running in the member untouched: its template carries
work.karmada.io/conflict-resolution=overwrite, and Flotilla takes the member
object over in place, without writing it while it equals the template.

If the resource already exists in Karmada control plane,
please edit PropagationPolicy and OverridePolicy to propagate it.`,
		Example: fmt.Sprintf(`  # Promote deployment(default/nginx) from cluster1 to Karmada
  %[1]s promote deployment nginx -n default -C cluster1

  # Promote deployment(default/nginx) with gvk from cluster1 to Karmada
  %[1]s promote deployment.v1.apps nginx -n default -C cluster1

  # Promote deployment(default/nginx) and the ConfigMaps, Secrets, ServiceAccount and PVCs it uses
  %[1]s promote deployment nginx -n default -C cluster1 -d

  # Dumps the artifacts but does not deploy them to Karmada, same as 'dry run'
  %[1]s promote deployment nginx -n default -C cluster1 -o yaml|json

  # Promote secret(default/default-token) from cluster1 to Karmada
  %[1]s promote secret default-token -n default -C cluster1

  # Support to use '--cluster-kubeconfig' to specify the configuration of member cluster
  %[1]s promote deployment nginx -n default -C cluster1 --cluster-kubeconfig=<CLUSTER_KUBECONFIG_PATH>

  # Support to use '--cluster-kubeconfig' and '--cluster-context' to specify the configuration of member cluster
  %[1]s promote deployment nginx -n default -C cluster1 --cluster-kubeconfig=<CLUSTER_KUBECONFIG_PATH> --cluster-context=<CLUSTER_CONTEXT>`, self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.Run(cmd.Context(), cp.config, self, args, cmd.ErrOrStderr(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&f.Output, "output", "o", "", "Output format. One of: json|yaml")
	// -C/--cluster takes the place of the root command's --cluster (the
	// kubeconfig cluster), as in karmadactl.
	fs.StringVarP(&f.Cluster, clusterproxy.ClusterFlag, "C", "", "the name of legacy cluster (eg -C=member1)")
	fs.StringVar(&f.ClusterContext, "cluster-context", "", "Context name of legacy cluster in kubeconfig. Only works when there are multiple contexts in the kubeconfig.")
	fs.StringVar(&f.ClusterKubeconfig, "cluster-kubeconfig", "", "Path of the legacy cluster's kubeconfig.")
	fs.BoolVar(&f.DryRun, "dry-run", false, "Run the command in dry-run mode, without making any server requests.")
	fs.BoolVarP(&f.Dependencies, "dependencies", "d", false, "Promote resource with its dependencies automatically, default to false")
	return cmd
}
