package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/flotilla-io/flotilla/cli/apply"
)

// newApplyCommand returns apply: kubectl apply in the control plane and,
// with --all-clusters or -C, a policy per object placing it (karmadactl
// apply).
func newApplyCommand(cp *controlPlaneFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	flags := apply.NewFlags(streams)
	cmd := &cobra.Command{
		Use:   "apply (-f FILENAME | -k DIRECTORY) [--all-clusters | -C CLUSTER[,CLUSTER...]] [--dry-run=placement]",
		Short: "Apply a configuration to a resource by file name or stdin and propagate them into member clusters",
		Long: `Apply a configuration to a resource by file name or stdin and propagate them into member clusters.
The resource name must be specified. This resource will be created if it doesn't exist yet.

JSON and YAML formats are accepted.

Note: it is 'kubectl apply' against the control plane by default. With
--all-clusters or -C/--cluster, each object is applied with a
PropagationPolicy (a ClusterPropagationPolicy for a cluster-scoped kind),
named as karmadactl names it, that places it on every member cluster or on
the clusters named.

With --dry-run=placement nothing is applied: the control plane reviews the
manifests (resource templates with the policies and override policies that
go with them, and its own existing ones unless --dry-run-ignore-existing)
by the same policy choice, scheduling and overrides it would apply, and
the command prints, for each template, the policy that would claim it and
the clusters it would go to, with their replicas and overrides; existing
templates a policy of the manifests would claim are listed too.`,
		Example: fmt.Sprintf(`  # Apply the configuration without propagation into member clusters. It acts as 'kubectl apply'.
  %[1]s apply -f manifest.yaml

  # Apply the configuration with propagation into specific member clusters.
  %[1]s apply -f manifest.yaml --cluster member1,member2

  # Apply resources from a directory and propagate them into all member clusters.
  %[1]s apply -f dir/ --all-clusters

  # Apply resources from a directory containing kustomization.yaml and propagate them into all member clusters
  %[1]s apply -k dir/ --all-clusters

  # Where would these templates and policies go? (nothing is written)
  %[1]s apply -f manifests.yaml --dry-run=placement`, self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return flags.Run(cmd.Context(), cp.config, cmd, self, args)
		},
	}
	flags.AddFlags(cmd)
	return cmd
}
