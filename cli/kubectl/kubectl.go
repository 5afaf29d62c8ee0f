package kubectl

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
)

// InMember builds a kubectl command that runs in a member cluster, named
// by the required -C/--cluster (karmadactl logs, exec); controlPlane are
// the root command's kubectl flags.
func InMember(controlPlane *genericclioptions.ConfigFlags, build func(cmdutil.Factory) *cobra.Command) *cobra.Command {
	f := clusterproxy.New(controlPlane)
	cmd := build(f)
	var flags clusterproxy.Flags
	flags.AddMemberFlags(cmd.Flags())
	clusterproxy.Bind(cmd, f, &flags)
	return cmd
}

// Scoped builds a kubectl command that runs in the control plane, or with
// --operation-scope=members/-C in a member (karmadactl attach,
// api-resources, explain; create, delete, edit, label, annotate, patch).
// The flags are persistent so that subcommands (create configmap ...)
// have them too.
func Scoped(controlPlane *genericclioptions.ConfigFlags, build func(cmdutil.Factory) *cobra.Command) *cobra.Command {
	f := clusterproxy.New(controlPlane)
	cmd := build(f)
	var flags clusterproxy.Flags
	flags.AddScopeFlags(cmd.PersistentFlags(), controlPlane)
	clusterproxy.Bind(cmd, f, &flags)
	return cmd
}
