package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/component-base/logs"
	kubectloptions "k8s.io/kubectl/pkg/cmd/options"

	"github.com/flotilla-io/flotilla/cli/kubectl"
)

const (
	// defaultName is the command's name when it is not run as a kubectl plugin.
	defaultName = "flotillactl"
	// pluginPrefix is how kubectl finds plugins: kubectl-<name> on the PATH.
	pluginPrefix = "kubectl-"
	// completionPrefix is how kubectl finds a plugin's shell completion:
	// kubectl_complete-<name> on the PATH, run with the words to complete.
	completionPrefix = "kubectl_complete-"
)

// Execute runs the root command on args (os.Args[1:]) and prints an error
// as kubectl and karmadactl do ("error: ..."), on the command's stderr.
func Execute(ctx context.Context, cmd *cobra.Command, args []string) error {
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "error: %v\n", err)
	}
	return err
}

// CompletionArgs returns the arguments the root command runs with: args,
// or, invoked as kubectl_complete-flotilla (a link to this binary, which
// kubectl runs to complete "kubectl flotilla ..."), cobra's completion
// request for args.
func CompletionArgs(invokedAs string, args []string) []string {
	if strings.HasPrefix(strings.TrimSuffix(invokedAs, ".exe"), completionPrefix) {
		return append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return args
}

// NewCommand returns the root command. invokedAs is the base name of the
// executable (os.Args[0]): as kubectl-flotilla the help reads
// "kubectl flotilla join ...", otherwise "flotillactl join ...".
func NewCommand(invokedAs string) *cobra.Command {
	name := strings.TrimSuffix(invokedAs, ".exe")
	if plugin, ok := strings.CutPrefix(name, completionPrefix); ok {
		name = pluginPrefix + plugin
	}
	if name == "" || name == "." || name == "/" {
		name = defaultName
	}
	cmd := &cobra.Command{
		Use:   name,
		Short: "Register member clusters with a Flotilla (Karmada-compatible) control plane and manage them",
		Long: `Register member clusters with a Flotilla control plane and manage them.

Flotilla is wire-compatible with Karmada: the commands below have the effects of
the karmadactl commands of the same name. The control plane is addressed with
the usual kubectl flags (--kubeconfig, --context, ...).

Shell completion: "source <(flotillactl completion bash)" (or zsh, fish,
powershell). As the kubectl plugin, a link named kubectl_complete-flotilla to
this binary on the PATH completes "kubectl flotilla ...".`,
		SilenceUsage: true,
		// main prints the error as kubectl does ("error: ..."), once.
		SilenceErrors: true,
	}
	display := name
	if plugin, ok := strings.CutPrefix(name, pluginPrefix); ok && plugin != "" {
		// kubectl runs kubectl-flotilla for "kubectl flotilla"; say so in help.
		display = "kubectl " + plugin
		cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: display}
	}

	cp := newControlPlaneFlags()
	cp.addFlags(cmd)
	// klog's -v and --vmodule, as kubectl has them.
	logs.AddFlags(cmd.PersistentFlags())
	streams := stdStreams()
	options := kubectloptions.NewCmdOptions(outOf{cmd})
	options.Example = fmt.Sprintf(`  # Print flags inherited by all commands
  %[1]s options`, display)

	cmd.AddCommand(
		newJoinCommand(cp, display),
		newUnjoinCommand(cp, display),
		newTaintCommand(cp, display),
		newCordonCommand(cp, display, true),
		newCordonCommand(cp, display, false),
		newInterpretCommand(display),
		newSearchCommand(cp, display),
		newConsoleCommand(cp, display),
		newTokenCommand(cp, display),
		newRegisterCommand(display),
		newUnregisterCommand(display),
		newInitCommand(cp, display),
		newDeinitCommand(cp, display),
		newBackupCommand(display),
		newRestoreCommand(display),
		newAddonsCommand(cp, display),
		newGetCommand(cp, display),
		newDescribeCommand(cp, display),
		kubectl.NewLogs(cp.config, streams, display),
		kubectl.NewExec(cp.config, streams, display),
		kubectl.NewAttach(cp.config, streams, display),
		newTopCommand(cp, streams, display),
		kubectl.NewAPIResources(cp.config, streams, display),
		kubectl.NewAPIVersions(cp.config, streams, display),
		kubectl.NewExplain(cp.config, streams, display),
		kubectl.NewCreate(cp.config, streams, display),
		kubectl.NewDelete(cp.config, streams, display),
		kubectl.NewEdit(cp.config, streams, display),
		kubectl.NewLabel(cp.config, streams, display),
		kubectl.NewAnnotate(cp.config, streams, display),
		kubectl.NewPatch(cp.config, streams, display),
		newApplyCommand(cp, streams, display),
		newPromoteCommand(cp, display),
		newRolloutCommand(cp, display),
		newDriftCommand(cp, display),
		newExplainPlacementCommand(cp, display),
		newInventoryCommand(cp, display),
		newVersionCommand(cp, display),
		options,
	)
	return cmd
}

// controlPlaneFlags are the kubectl flags that locate the control plane.
type controlPlaneFlags struct {
	config *genericclioptions.ConfigFlags
}

func newControlPlaneFlags() *controlPlaneFlags {
	return &controlPlaneFlags{config: genericclioptions.NewConfigFlags(true)}
}

func (f *controlPlaneFlags) addFlags(cmd *cobra.Command) {
	fs := cmd.PersistentFlags()
	f.config.AddFlags(fs)
	// karmadactl names the control-plane context --karmada-context; accept it
	// so karmadactl command lines work unchanged. Both flags share one value.
	fs.StringVar(f.config.Context, "karmada-context", "", "Alias of --context: the kubeconfig context of the control plane (karmadactl compatibility).")
}
