package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/membership"
	"github.com/flotilla-io/flotilla/names"
)

func newRegisterCommand(self string) *cobra.Command {
	o := membership.NewRegisterOptions(self)
	cmd := &cobra.Command{
		Use:   "register CONTROL_PLANE_ENDPOINT --token=<TOKEN> --discovery-token-ca-cert-hash=<HASH> --kubeconfig=<MEMBER KUBECONFIG>",
		Short: "Register a cluster with the control plane in Pull mode, for a flotilla-agent",
		Long: `Register a cluster with the control plane in Pull mode, as karmadactl register does.

register reads the control plane's CA from kube-public/cluster-info at the
endpoint and checks it against --discovery-token-ca-cert-hash before it sends
the bootstrap token there. With the token it requests a client certificate for
system:karmada:agent:<cluster name> (group system:karmada:agents), annotated
with the member's id (the uid of its kube-system namespace). The control plane
approves it, creating the Cluster (syncMode Pull) and the agent's rights (its
own Cluster, Lease, and the Works of karmada-es-<cluster name>, nothing else),
or denies it: the name is taken by another member, or this member is
registered under another name. Nothing is written to the member before the
certificate is issued.

In the member (--kubeconfig), in --agent-namespace: the Secret
` + names.AgentConfigSecret + ` (key ` + names.AgentConfigKey + `) holding the agent's kubeconfig,
ServiceAccount ` + membership.AgentServiceAccount + ` and ClusterRole/ClusterRoleBinding ` + membership.AgentClusterRole + ` (all
rights in the member, impersonation included), and the Deployment ` + membership.AgentRelease + `
of charts/flotilla-agent (the chart helm installs) with --karmada-agent-image and
--karmada-agent-replicas, applied server-side; more than one replica elects a
leader. --karmada-agent-replicas=0 applies no Deployment and prints how to run
the agent as a local process. A member that already holds the Secret is
refused unless --force (which re-issues its credentials).

--dry-run checks the member as register would, prints the objects it would
create and the Deployment as YAML, and writes nothing: it sends nothing to the
control plane and creates nothing in the member.

A cluster name that is already registered is issued again only when a
control-plane admin allows it: --force with --control-plane-kubeconfig (an
admin's kubeconfig) annotates the Cluster to allow one more registration of
this member, or an admin deletes the Cluster. A bootstrap token alone never
re-issues the credentials of a registered cluster.

Get the endpoint, token and hash from "token create --print-register-command"
on the control plane.`,
		Example: fmt.Sprintf(`  %[1]s register https://control-plane.example:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hash> --cluster-name member3 --kubeconfig member3.config \
    --karmada-agent-image ghcr.io/flotilla-io/flotilla:v0.1.0 --karmada-agent-replicas 2

  # Print the agent's Deployment without registering
  %[1]s register https://control-plane.example:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hash> --cluster-name member3 --kubeconfig member3.config --dry-run

  # Register for an agent run as a local process
  %[1]s register https://control-plane.example:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hash> --cluster-name member3 --kubeconfig member3.config \
    --karmada-agent-replicas 0 --agent-kubeconfig-out member3-agent.config`, self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			noteIgnored(cmd.Flags(), func(format string, a ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format, a...) })
			return o.Run(cmd.Context(), args, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	// These shadow the control-plane flags of the same names: register
	// reaches the control plane with the endpoint and the token only.
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path of the member cluster's kubeconfig. Default: $KUBECONFIG, else ~/.kube/config.")
	fs.StringVar(&o.Context, "context", o.Context, "Context of the member in --kubeconfig. Default: its current context.")
	fs.StringVar(&o.Token, "token", o.Token, "The bootstrap token (from token create) that authenticates the certificate request.")
	fs.StringSliceVar(&o.CACertHashes, "discovery-token-ca-cert-hash", o.CACertHashes, `Pin of the control plane's CA: "sha256:<hex>" of its public key (SubjectPublicKeyInfo), as kubeadm computes it.`)
	fs.BoolVar(&o.UnsafeSkipCAVerification, "discovery-token-unsafe-skip-ca-verification", o.UnsafeSkipCAVerification, "Trust the CA of cluster-info without --discovery-token-ca-cert-hash, on the token's signature alone.")
	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "Name of the cluster on the control plane. Default: the name of the kubeconfig context's cluster.")
	fs.StringVar(&o.AgentNamespace, "agent-namespace", o.AgentNamespace, "Member namespace of the agent, its Secret and ServiceAccount.")
	fs.StringVar(&o.AgentKubeconfigOut, "agent-kubeconfig-out", o.AgentKubeconfigOut, "Also write the agent's control-plane kubeconfig to this file (mode 0600), for an agent run as a local process.")
	fs.Int32Var(&o.CertExpirationSeconds, "cert-expiration-seconds", o.CertExpirationSeconds, "Requested lifetime of the agent's certificate (the control plane may cap it); the agent renews it before it expires.")
	fs.DurationVar(&o.Timeout, "discovery-timeout", o.Timeout, "How long to wait for the control plane: cluster-info's signature and the certificate's approval.")
	fs.BoolVar(&o.Force, "force", o.Force, "Register a member that already holds an agent Secret again, replacing its credentials; with --control-plane-kubeconfig, also allow the control plane to issue a registered cluster name again.")
	fs.StringVar(&o.ControlPlaneKubeconfig, "control-plane-kubeconfig", o.ControlPlaneKubeconfig, "Kubeconfig of a control-plane admin; with --force, allows registering a cluster name that is already registered (this member's).")
	fs.StringVar(&o.ControlPlaneContext, "control-plane-context", o.ControlPlaneContext, "Context of the control plane in --control-plane-kubeconfig.")
	fs.StringVar(&o.AgentImage, "karmada-agent-image", o.AgentImage, "Image of the agent's Deployment (it runs /usr/local/bin/flotilla-agent). Default: the chart's, ghcr.io/flotilla-io/flotilla at this version.")
	fs.Int32Var(&o.AgentReplicas, "karmada-agent-replicas", o.AgentReplicas, "Replicas of the agent's Deployment; more than one elects a leader; 0 applies no Deployment, for an agent run as a local process.")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Print what register would create, the agent's Deployment as YAML, and do nothing: nothing is sent to the control plane or written to the member.")
	fs.StringVar(&o.ClusterProvider, "cluster-provider", o.ClusterProvider, "Provider of the cluster (the new Cluster's spec.provider), for spreading workloads across providers.")
	fs.StringVar(&o.ClusterRegion, "cluster-region", o.ClusterRegion, "Region of the cluster (the new Cluster's spec.region), for spreading workloads across regions.")
	fs.StringSliceVar(&o.ClusterZones, "cluster-zones", o.ClusterZones, "Zones of the cluster (the new Cluster's spec.zones), comma-separated, for spreading workloads across zones.")
	// karmadactl's names and flags.
	alias(fs, "agent-namespace", "namespace", "n", false)
	ignoredString(fs, "cluster-namespace", names.SecretNamespace, "a Pull member's credentials are its agent's certificate, kept in no control-plane Secret.")
	ignoredBool(fs, "enable-cert-rotation", false, "the agent always renews its certificate before it expires.")
	ignoredString(fs, "proxy-server-address", "", "the control plane reaches a Pull member through its agent's tunnel, not a proxy.")
	ignoredString(fs, "feature-gates", "", "the agent has no feature gates.")
	return cmd
}
