package app

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/flotilla-io/flotilla/cli/membership"
)

// newTokenCommand returns token, with create, list and delete.
func newTokenCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage the bootstrap tokens that register clusters in Pull mode",
		Long: `Manage bootstrap tokens on the control plane, as karmadactl token does.

A bootstrap token lets "register" request the certificate of a member's
flotilla-agent. Tokens are Secrets kube-system/bootstrap-token-<id> of type
bootstrap.kubernetes.io/token; the control plane deletes them when they expire.`,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the bootstrap tokens",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return membership.ListTokens(cmd.Context(), cp.config, cmd.OutOrStdout())
		},
	}
	del := &cobra.Command{
		Use:   "delete TOKEN_ID|TOKEN...",
		Short: "Delete bootstrap tokens",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return membership.DeleteTokens(cmd.Context(), cp.config, args, cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(newTokenCreateCommand(cp, self), list, del)
	return cmd
}

func newTokenCreateCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := membership.NewTokenCreateOptions(self)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token, and print it or the register command that uses it",
		Long: `Create a bootstrap token on the control plane, as karmadactl token create does.

The token authenticates as system:bootstrap:<id> in the groups
system:bootstrappers and --groups; the default group may request agent
certificates (flotilla-apiserver grants it). create also makes sure
kube-public/cluster-info exists: it holds the control plane's endpoint and CA,
which register checks against the CA hash before it trusts the endpoint with
the token.`,
		Example: fmt.Sprintf(`  # A token valid for a day, and the command that registers a member with it
  %[1]s token create --print-register-command

  # Then, with the member's kubeconfig
  %[1]s register https://control-plane.example:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hash> --cluster-name member3 --kubeconfig member3.config`, self),
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.Run(cmd.Context(), cp.config, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&o.TTL, "ttl", o.TTL, "How long the token is valid; 0 means it never expires.")
	fs.StringVar(&o.Description, "description", o.Description, "A human-friendly description of what the token is for.")
	fs.StringSliceVar(&o.Groups, "groups", o.Groups, `Extra groups the token authenticates as; each must match "system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]".`)
	fs.BoolVar(&o.PrintRegisterCommand, "print-register-command", o.PrintRegisterCommand, "Print the whole register command instead of only the token.")
	fs.StringSliceVar(&o.Usages, "usages", o.Usages, "How the token may be used: "+strings.Join(bootstrapapi.KnownTokenUsages, ", ")+
		" (register needs both: signing to trust cluster-info, authentication to request the agent's certificate).")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "Bind the token to one cluster name: it may register only that cluster, and is not counted against flotilla-apiserver's --max-clusters-per-token.")
	return cmd
}
