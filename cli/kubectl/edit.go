package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectledit "k8s.io/kubectl/pkg/cmd/edit"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewEdit returns edit: kubectl edit in the control plane or, with
// --operation-scope=members -C, in a member.
func NewEdit(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectledit.NewCmdEdit(f, streams) })
	cmd.Example = examples(self, `
		# Edit the propagationpolicy named nginx in the control plane
		%[1]s edit propagationpolicy/nginx

		# Edit the service named registry in cluster member1
		KUBE_EDITOR="nano" %[1]s edit svc/registry -C member1`)
	return cmd
}
