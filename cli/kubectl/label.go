package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectllabel "k8s.io/kubectl/pkg/cmd/label"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewLabel returns label: kubectl label in the control plane or, with
// --operation-scope=members -C, in a member.
func NewLabel(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectllabel.NewCmdLabel(f, streams) })
	cmd.Example = examples(self, `
		# Update deployment foo with the label resourcetemplate.karmada.io/deletion-protected=Always
		%[1]s label deployment foo resourcetemplate.karmada.io/deletion-protected=Always

		# Label the node n1 of cluster member1
		%[1]s label node n1 disktype=ssd -C member1

		# Remove the label disktype from the node n1 of cluster member1
		%[1]s label node n1 disktype- --operation-scope=members --cluster=member1`)
	return cmd
}
