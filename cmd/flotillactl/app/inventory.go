package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/inventory"
)

// newInventoryCommand returns inventory credential|provider-file: the
// consumer side of the ClusterProfiles Flotilla publishes.
func newInventoryCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inventory",
		Short: "Reach member clusters through their ClusterProfiles (SIG-Multicluster Cluster Inventory API)",
		Long: `Reach member clusters through the ClusterProfiles Flotilla publishes.

Every member has a ClusterProfile (multicluster.x-k8s.io) whose access provider
"flotilla" points at the control plane's clusters/{name}/proxy: a consumer
reaches the member as itself, with its own credentials for the control plane.
"credential" is the exec credential plugin that hands client-go those
credentials; "provider-file" prints the provider file naming it.`,
	}
	cmd.AddCommand(newInventoryCredentialCommand(cp, self), newInventoryProviderFileCommand(cp, self))
	return cmd
}

func newInventoryCredentialCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var allowed []string
	cmd := &cobra.Command{
		Use:   "credential",
		Short: "Exec credential plugin: the caller's control-plane credentials for a ClusterProfile's access provider",
		Long: `Print an ExecCredential (client.authentication.k8s.io) carrying the credentials
the kubeconfig has for the control plane: its token, or its client certificate
and key. client-go runs it as the exec plugin a provider file names, with the
cluster in KUBERNETES_EXEC_INFO; the credentials are handed only to the
control plane of the kubeconfig (or a server --allowed-server names).`,
		Example: fmt.Sprintf(`  # What client-go runs for a ClusterProfile's "flotilla" access provider
  %[1]s inventory credential --kubeconfig ~/.kube/flotilla.config`, self),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return inventory.RunCredential(inventory.CredentialOptions{
				ControlPlane: cp.config.ToRESTConfig, ExecInfo: os.Getenv(inventory.ExecInfoEnv),
				AllowedServers: allowed, Out: cmd.OutOrStdout(),
			})
		},
	}
	cmd.Flags().StringArrayVar(&allowed, "allowed-server", nil, "Another URL of the control plane the credentials may be handed to (the --cluster-profile-server of flotilla-apiserver, when the profiles advertise one). Repeatable.")
	return cmd
}

func newInventoryProviderFileCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var command string
	var allowed []string
	cmd := &cobra.Command{
		Use:   "provider-file",
		Short: "Print the provider file a Cluster Inventory consumer reads, naming this binary as the plugin",
		Example: fmt.Sprintf(`  # The provider file of a consumer (Argo CD, MultiKueue, a controller using the access library)
  %[1]s inventory provider-file --kubeconfig ~/.kube/flotilla.config > clusterprofile-provider-file.json`, self),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if command == "" {
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				command = exe
			}
			args := []string{"inventory", "credential"}
			if k := *cp.config.KubeConfig; k != "" {
				abs, err := filepath.Abs(k)
				if err != nil {
					return err
				}
				args = append(args, "--kubeconfig="+abs)
			}
			if c := *cp.config.Context; c != "" {
				args = append(args, "--context="+c)
			}
			for _, s := range allowed {
				args = append(args, "--allowed-server="+s)
			}
			return inventory.WriteProviderFile(cmd.OutOrStdout(), command, args)
		},
	}
	cmd.Flags().StringVar(&command, "command", "", "The plugin's command in the file (default: this binary's absolute path).")
	cmd.Flags().StringArrayVar(&allowed, "allowed-server", nil, "Passed on to the plugin: another URL of the control plane it may hand the credentials to. Repeatable.")
	return cmd
}
