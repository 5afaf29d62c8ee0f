package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

const (
	// defaultName is the command's name when it is not run as a kubectl plugin.
	defaultName = "flotillactl"
	// pluginPrefix is how kubectl finds plugins: kubectl-<name> on the PATH.
	pluginPrefix = "kubectl-"
	// userAgent is sent to the control plane and to member clusters.
	userAgent = "flotillactl"
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

// NewCommand returns the root command. invokedAs is the base name of the
// executable (os.Args[0]): as kubectl-flotilla the help reads
// "kubectl flotilla join ...", otherwise "flotillactl join ...".
func NewCommand(invokedAs string) *cobra.Command {
	name := strings.TrimSuffix(invokedAs, ".exe")
	if name == "" || name == "." || name == "/" {
		name = defaultName
	}
	cmd := &cobra.Command{
		Use:   name,
		Short: "Register member clusters with a Flotilla (Karmada-compatible) control plane and manage them",
		Long: `Register member clusters with a Flotilla control plane and manage them.

Flotilla is wire-compatible with Karmada: the commands below have the effects of
the karmadactl commands of the same name. The control plane is addressed with
the usual kubectl flags (--kubeconfig, --context, ...).`,
		SilenceUsage: true,
		// main prints the error as kubectl does ("error: ..."), once.
		SilenceErrors: true,
		// Completion is not a concern of this tool; keep the command list short.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	display := name
	if plugin, ok := strings.CutPrefix(name, pluginPrefix); ok && plugin != "" {
		// kubectl runs kubectl-flotilla for "kubectl flotilla"; say so in help.
		display = "kubectl " + plugin
		cmd.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: display}
	}

	cp := newControlPlaneFlags()
	cp.addFlags(cmd)

	cmd.AddCommand(
		newJoinCommand(cp, display),
		newUnjoinCommand(cp, display),
		newTaintCommand(cp, display),
		newCordonCommand(cp, display, true),
		newCordonCommand(cp, display, false),
		newInterpretCommand(display),
		newSearchCommand(cp, display),
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
	)
	return cmd
}

// controlPlane holds the clients of the control plane. The control plane is
// a kube-apiserver that aggregates flotilla-apiserver, so core objects and
// karmada.io objects are served by the same endpoint.
type controlPlane struct {
	kube    kubernetes.Interface
	karmada versioned.Interface
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

// clients builds the control-plane clients from the flags.
func (f *controlPlaneFlags) clients() (controlPlane, error) {
	cfg, err := f.config.ToRESTConfig()
	if err != nil {
		return controlPlane{}, fmt.Errorf("loading the control-plane kubeconfig: %w", err)
	}
	return newControlPlane(cfg)
}

func newControlPlane(cfg *rest.Config) (controlPlane, error) {
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), userAgent)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return controlPlane{}, fmt.Errorf("building the control-plane client for %s: %w", cfg.Host, err)
	}
	karmada, err := versioned.NewForConfig(cfg)
	if err != nil {
		return controlPlane{}, fmt.Errorf("building the karmada.io client for %s: %w", cfg.Host, err)
	}
	return controlPlane{kube: kube, karmada: karmada}, nil
}
