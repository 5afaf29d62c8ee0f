package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlexec "k8s.io/kubectl/pkg/cmd/exec"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewExec returns exec: kubectl exec in the member -C names
// (karmadactl exec).
func NewExec(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := inMember(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlexec.NewCmdExec(f, streams) })
	cmd.Use = "exec (POD | TYPE/NAME) [-c CONTAINER] -C CLUSTER [flags] -- COMMAND [args...]"
	cmd.Short = "Execute a command in a container in a member cluster"
	cmd.Example = examples(self, `
		# Get output from running the 'date' command from pod mypod, using the first container by default, in cluster member1
		%[1]s exec mypod -C member1 -- date

		# Get output from running the 'date' command in ruby-container from pod mypod in cluster member1
		%[1]s exec mypod -c ruby-container -C member1 -- date

		# Switch to raw terminal mode; sends stdin to 'bash' in ruby-container from pod mypod in cluster member1
		# and sends stdout/stderr from 'bash' back to the client
		%[1]s exec mypod -c ruby-container -C member1 -i -t -- bash -il

		# Get output from running 'date' command from the first pod of the deployment mydeployment in cluster member1
		%[1]s exec deploy/mydeployment -C member1 -- date`)
	return cmd
}
