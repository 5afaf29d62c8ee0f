package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectldelete "k8s.io/kubectl/pkg/cmd/delete"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewDelete returns delete: kubectl delete in the control plane or, with
// --operation-scope=members -C, in a member.
func NewDelete(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectldelete.NewCmdDelete(f, streams) })
	cmd.Example = examples(self, `
		# Delete a propagationpolicy using the type and name specified in propagationpolicy.json
		%[1]s delete -f ./propagationpolicy.json

		# Delete the deployment nginx in cluster member1 (not the template: the control plane may recreate it)
		%[1]s delete deployment nginx --operation-scope=members --cluster=member1`)
	return cmd
}
