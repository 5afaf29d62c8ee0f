package kubectl

import (
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
)

// inMember builds a kubectl command that runs in a member cluster, named
// by the required -C/--cluster (karmadactl logs, exec); controlPlane are
// the root command's kubectl flags.
func inMember(controlPlane *genericclioptions.ConfigFlags, build func(cmdutil.Factory) *cobra.Command) *cobra.Command {
	f := clusterproxy.New(controlPlane)
	cmd := build(f)
	var flags clusterproxy.Flags
	flags.AddMemberFlags(cmd.Flags())
	clusterproxy.Bind(cmd, f, &flags)
	return cmd
}

// scoped builds a kubectl command that runs in the control plane, or with
// --operation-scope=members/-C in a member (karmadactl attach,
// api-resources, explain; create, delete, edit, label, annotate, patch).
// The flags are persistent so that subcommands (create configmap ...)
// have them too.
func scoped(controlPlane *genericclioptions.ConfigFlags, build func(cmdutil.Factory) *cobra.Command) *cobra.Command {
	f := clusterproxy.New(controlPlane)
	cmd := build(f)
	var flags clusterproxy.Flags
	flags.AddScopeFlags(cmd.PersistentFlags(), controlPlane)
	clusterproxy.Bind(cmd, f, &flags)
	return cmd
}

// examples formats a command's examples: each "%[1]s" is the command line
// name (flotillactl, or kubectl flotilla), indented as cobra prints them.
func examples(self, text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l != "" {
			l = "  " + strings.ReplaceAll(l, "%[1]s", self)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
