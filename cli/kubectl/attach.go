package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlattach "k8s.io/kubectl/pkg/cmd/attach"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewAttach returns attach: kubectl attach in the control plane or,
// with --operation-scope=members -C, in a member (karmadactl attach).
func NewAttach(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlattach.NewCmdAttach(f, streams) })
	cmd.Example = examples(self, `
		# Get output from running pod mypod in cluster member1; use the 'kubectl.kubernetes.io/default-container' annotation
		# for selecting the container to be attached or the first container in the pod will be chosen
		%[1]s attach mypod --operation-scope=members --cluster=member1

		# Get output from ruby-container from pod mypod in cluster member1
		%[1]s attach mypod -c ruby-container -C member1

		# Switch to raw terminal mode; sends stdin to 'bash' in ruby-container from pod mypod in the control plane
		# and sends stdout/stderr from 'bash' back to the client
		%[1]s attach mypod -c ruby-container -i -t`)
	return cmd
}
