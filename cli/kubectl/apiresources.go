package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlapiresources "k8s.io/kubectl/pkg/cmd/apiresources"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewAPIResources returns api-resources: kubectl api-resources of
// the control plane or, with --operation-scope=members -C, of a member
// (karmadactl api-resources).
func NewAPIResources(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlapiresources.NewCmdAPIResources(f, streams) })
	cmd.Example = examples(self, `
		# Print the supported API resources of the control plane
		%[1]s api-resources

		# Print the supported API resources with more information in cluster member1
		%[1]s api-resources -o wide --operation-scope=members --cluster=member1

		# Print the supported namespaced resources of cluster member1
		%[1]s api-resources --namespaced=true -C member1

		# Print the supported API resources with a specific APIGroup of the control plane
		%[1]s api-resources --api-group=policy.karmada.io`)
	return cmd
}

// NewAPIVersions returns api-versions: kubectl api-versions of the
// control plane or of a member (karmadactl api-versions).
func NewAPIVersions(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlapiresources.NewCmdAPIVersions(f, streams) })
	cmd.Example = examples(self, `
		# Print the supported API versions of the control plane
		%[1]s api-versions

		# Print the supported API versions of cluster member1
		%[1]s api-versions --operation-scope=members --cluster=member1`)
	return cmd
}
