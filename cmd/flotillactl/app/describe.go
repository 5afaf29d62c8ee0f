package app

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/cli/multiget"
)

// newDescribeCommand returns describe: kubectl describe in the control
// plane or in member clusters (karmadactl describe), members read through
// clusters/{name}/proxy as the caller.
func newDescribeCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := multiget.NewDescribeOptions(genericiooptions.IOStreams{})
	cmd := &cobra.Command{
		Use:   "describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME) [--operation-scope=karmada|members|all] [-C member1,member2]",
		Short: "Show details of a specific resource or group of resources in the control plane or member clusters",
		Long: `Show details of a specific resource or group of resources, as kubectl describe
does, in the control plane (--operation-scope=karmada, the default) or in
member clusters (members: every member, or those of -C; -C alone implies
members; all: both). In member clusters each description starts with a
Cluster line. Members are read concurrently through the control plane's
clusters/{name}/proxy as you; a member that cannot be read is named in a
warning on stderr, and the command fails only when nothing could be read.

As in kubectl, TYPE NAME_PREFIX first looks for an exact match and then
describes every object whose name starts with NAME_PREFIX.`,
		Example: `  # A Deployment of the control plane
  ` + self + ` describe deployment/nginx

  # The same Deployment as propagated to member1 (karmadactl's spelling, then the short one)
  ` + self + ` describe deployment/nginx --operation-scope=members --cluster=member1
  ` + self + ` describe deployment/nginx -C member1

  # Pods labelled app=nginx in every member
  ` + self + ` describe pods -l app=nginx --operation-scope=members`,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IOStreams = commandStreams(cmd)
			o.Flags.IOStreams = o.IOStreams
			o.Selection.ScopeSet = cmd.Flags().Changed(clusterproxy.ScopeFlag)
			return o.Run(cmd.Context(), cp.config, controlplane.ClusterNames(cp.config), self, args)
		},
	}
	o.Flags.AddFlags(cmd)
	fs := cmd.Flags()
	addSelectionFlags(fs, cp, &o.Selection, "describe in")
	// karmadactl describe names its one member --cluster. It shadows
	// kubectl's --cluster (a kubeconfig cluster) for this command only;
	// --context still chooses the control plane.
	alias(fs, "clusters", "cluster", "", true)
	return cmd
}
