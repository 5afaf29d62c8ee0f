package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlexplain "k8s.io/kubectl/pkg/cmd/explain"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewExplain returns explain: kubectl explain from the control
// plane's OpenAPI or, with --operation-scope=members -C, from a member's
// (karmadactl explain).
func NewExplain(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlexplain.NewCmdExplain(self, f, streams) })
	cmd.Example = examples(self, `
		# Get the documentation of the resource and its fields in the control plane
		%[1]s explain propagationpolicies

		# Get all the fields in the resource in member cluster member1
		%[1]s explain pods --recursive --operation-scope=members --cluster=member1

		# Get the explanation for resourcebindings in supported api versions in the control plane
		%[1]s explain resourcebindings --api-version=work.karmada.io/v1alpha2

		# Get the documentation of a specific field of a resource in member cluster member1
		%[1]s explain pods.spec.containers -C member1`)
	return cmd
}
