package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlannotate "k8s.io/kubectl/pkg/cmd/annotate"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewAnnotate returns annotate: kubectl annotate in the control plane or, with
// --operation-scope=members -C, in a member.
func NewAnnotate(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlannotate.NewCmdAnnotate(self, f, streams) })
	cmd.Example = examples(self, `
		# Update deployment foo with the annotation work.karmada.io/conflict-resolution=overwrite
		%[1]s annotate deployment foo work.karmada.io/conflict-resolution=overwrite

		# Annotate the pod web-1 of cluster member1, overwriting any existing value
		%[1]s annotate --overwrite pod web-1 description="my frontend" -C member1`)
	return cmd
}
