package app

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlcreate "k8s.io/kubectl/pkg/cmd/create"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/flotilla-io/flotilla/cli/kubectl"
)

// newCreateCommand returns create: kubectl create in the control plane or, with
// --operation-scope=members -C, in a member.
func newCreateCommand(cp *controlPlaneFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := kubectl.Scoped(cp.config, func(f cmdutil.Factory) *cobra.Command { return kubectlcreate.NewCmdCreate(f, streams) })
	cmd.Example = examples(self, `
		# Create the objects of propagationpolicy.yaml in the control plane
		%[1]s create -f ./propagationpolicy.yaml

		# Create a ConfigMap in cluster member1
		%[1]s create configmap settings --from-literal=mode=fast -C member1`)
	return cmd
}
