package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlcreate "k8s.io/kubectl/pkg/cmd/create"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewCreate returns create: kubectl create in the control plane or, with
// --operation-scope=members -C, in a member.
func NewCreate(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlcreate.NewCmdCreate(f, streams) })
	cmd.Example = examples(self, `
		# Create the objects of propagationpolicy.yaml in the control plane
		%[1]s create -f ./propagationpolicy.yaml

		# Create a ConfigMap in cluster member1
		%[1]s create configmap settings --from-literal=mode=fast -C member1`)
	return cmd
}
