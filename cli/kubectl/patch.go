package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlpatch "k8s.io/kubectl/pkg/cmd/patch"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

// NewPatch returns patch: kubectl patch in the control plane or, with
// --operation-scope=members -C, in a member.
func NewPatch(controlPlane *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := scoped(controlPlane, func(f cmdutil.Factory) *cobra.Command { return kubectlpatch.NewCmdPatch(f, streams) })
	cmd.Example = examples(self, `
		# Update a propagationpolicy's conflictResolution using a JSON patch
		%[1]s patch pp nginx --type=json -p='[{"op": "replace", "path": "/spec/conflictResolution", "value":"Overwrite"}]'

		# Scale the deployment nginx of cluster member1 directly (the control plane may set it back)
		%[1]s patch deployment nginx -p '{"spec":{"replicas":2}}' -C member1`)
	return cmd
}
