package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectllogs "k8s.io/kubectl/pkg/cmd/logs"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewLogs returns logs: kubectl logs in the member -C names
// (karmadactl logs).
func NewLogs(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := inMember(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectllogs.NewCmdLogs(f, streams) })
	cmd.Use = "logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER] -C CLUSTER"
	cmd.Short = "Print the logs for a container in a pod in a member cluster"
	cmd.Example = examples(self, `
		# Return snapshot logs from pod nginx with only one container in cluster member1
		%[1]s logs nginx -C member1

		# Return snapshot logs from all containers in pods defined by label app=nginx in cluster member1
		%[1]s logs -l app=nginx --all-containers=true -C member1

		# Return snapshot of previous terminated ruby container logs from pod web-1 in cluster member1
		%[1]s logs -p -c ruby web-1 -C member1

		# Begin streaming the logs of the ruby container in pod web-1 in cluster member1
		%[1]s logs -f -c ruby web-1 -C member1

		# Display only the most recent 20 lines of output in pod nginx in cluster member1
		%[1]s logs --tail=20 nginx -C member1`)
	return cmd
}
