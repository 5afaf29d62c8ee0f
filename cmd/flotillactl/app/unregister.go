package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/names"
)

// unregisterOptions holds the flags of unregister. Use newUnregisterOptions.
type unregisterOptions struct {
	ClusterName            string
	Kubeconfig             string
	Context                string
	ControlPlaneKubeconfig string
	ControlPlaneContext    string
	AgentNamespace         string
	Wait                   bool
	Timeout                time.Duration
	Force                  bool
	DryRun                 bool
	AgentName              string
	pollInterval           time.Duration
}

func newUnregisterOptions() *unregisterOptions {
	return &unregisterOptions{
		AgentNamespace: names.SystemNamespace,
		AgentName:      agentRelease,
		Wait:           true,
		Timeout:        60 * time.Second,
		pollInterval:   time.Second,
	}
}

func newUnregisterCommand(self string) *cobra.Command {
	o := newUnregisterOptions()
	cmd := &cobra.Command{
		Use:   "unregister CLUSTER_NAME --cluster-kubeconfig=<MEMBER KUBECONFIG> [--karmada-config=<KUBECONFIG>]",
		Short: "Remove a Pull-mode cluster: its agent's credentials and objects in the member, and its Cluster",
		Long: `Remove a cluster registered in Pull mode, as karmadactl unregister does.

With --karmada-config, deletes the Cluster (the control plane then
removes its execution namespace, and with the Cluster go the agent's rights and
Lease) and waits until it is gone, then deletes the agent's RBAC at once. The
agent's own identity cannot do this: it may not delete its Cluster.

In the member (--cluster-kubeconfig): the agent's Secret, ClusterRoleBinding,
ClusterRole, ServiceAccount and, if register created it, its namespace; objects
register did not create are kept. A member whose id is not the Cluster's is
refused unless --force.`,
		Example:               fmt.Sprintf("  %s unregister member3 --cluster-kubeconfig=member3.config --karmada-config=karmada.config", self),
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			noteIgnored(cmd.Flags(), func(format string, a ...any) { fmt.Fprintf(cmd.ErrOrStderr(), format, a...) })
			if len(args) != 1 {
				return errors.New("unregister takes exactly one argument, the cluster name")
			}
			o.ClusterName = args[0]
			if err := o.validate(); err != nil {
				return err
			}
			m, err := loadKubeconfig(o.Kubeconfig, o.Context)
			if err != nil {
				return fmt.Errorf("unregister cluster %q: %w", o.ClusterName, err)
			}
			var cp *controlPlane
			if o.ControlPlaneKubeconfig != "" {
				cfg, err := kubeconfigLoader(o.ControlPlaneKubeconfig, o.ControlPlaneContext).ClientConfig()
				if err != nil {
					return fmt.Errorf("unregister cluster %q: loading the control-plane kubeconfig: %w", o.ClusterName, err)
				}
				c, err := newControlPlane(cfg)
				if err != nil {
					return fmt.Errorf("unregister cluster %q: %w", o.ClusterName, err)
				}
				cp = &c
			}
			if err := o.run(cmd.Context(), cp, m.kube, cmd.OutOrStdout()); err != nil {
				return fmt.Errorf("unregister cluster %q: %w", o.ClusterName, err)
			}
			return nil
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

func (o *unregisterOptions) addFlags(fs *pflag.FlagSet) {
	// These shadow the control-plane flags of the same names, as in register.
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path of the member cluster's kubeconfig. Default: $KUBECONFIG, else ~/.kube/config.")
	fs.StringVar(&o.Context, "context", o.Context, "Context of the member in --kubeconfig.")
	fs.StringVar(&o.ControlPlaneKubeconfig, "control-plane-kubeconfig", o.ControlPlaneKubeconfig, "Kubeconfig of the control plane, to delete the Cluster. Without it the Cluster is kept.")
	fs.StringVar(&o.ControlPlaneContext, "control-plane-context", o.ControlPlaneContext, "Context of the control plane in --control-plane-kubeconfig.")
	fs.StringVar(&o.AgentNamespace, "agent-namespace", o.AgentNamespace, "Member namespace of the agent.")
	addWaitFlags(fs, &o.Wait, &o.Timeout, "for the Cluster to be gone")
	fs.BoolVar(&o.Force, "force", o.Force, "Unregister even if the member's id is not the Cluster's, or the Cluster is in Push mode.")
	fs.BoolVar(&o.DryRun, "dry-run", o.DryRun, "Only print what would be deleted; read but write nothing.")
	fs.StringVar(&o.AgentName, "agent-name", o.AgentName, "Name of the agent's Deployment in the member.")
	// karmadactl's names of the same flags.
	alias(fs, "kubeconfig", "cluster-kubeconfig", "", false)
	alias(fs, "context", "cluster-context", "", false)
	alias(fs, "control-plane-kubeconfig", "karmada-config", "", false)
	alias(fs, "control-plane-context", "karmada-context", "", false)
	alias(fs, "agent-namespace", "namespace", "n", false)
	ignoredString(fs, "cluster-namespace", names.SecretNamespace, "a Pull member's credentials are its agent's certificate, kept in no control-plane Secret.")
}

func (o *unregisterOptions) validate() error {
	f := memberFlags{cluster: o.ClusterName, namespaceFlag: "--agent-namespace", namespace: o.AgentNamespace}
	if o.Wait {
		f.timeoutFlag, f.timeout = "--wait", o.Timeout
	}
	return utilerrors.NewAggregate(f.validate())
}

// run unregisters; cp is nil without --control-plane-kubeconfig.
func (o *unregisterOptions) run(ctx context.Context, cp *controlPlane, member kubernetes.Interface, out io.Writer) error {
	p := printer{out: out, dryRun: o.DryRun}
	if cp != nil {
		if err := o.removeFromControlPlane(ctx, *cp, member, p); err != nil {
			return err
		}
	}
	if err := o.cleanMember(ctx, member, p); err != nil {
		return err
	}
	switch {
	case o.DryRun:
		fmt.Fprintf(out, "cluster(%s) would be unregistered (dry run: nothing was deleted)\n", o.ClusterName)
		return nil
	case cp == nil:
		fmt.Fprintf(out, "cluster(%s): the agent was removed from the member; the Cluster was kept (no --karmada-config)\n", o.ClusterName)
		return nil
	}
	fmt.Fprintf(out, "cluster(%s) is unregistered successfully\n", o.ClusterName)
	return nil
}

func (o *unregisterOptions) removeFromControlPlane(ctx context.Context, cp controlPlane, member kubernetes.Interface, p printer) error {
	action := unregisterAction.withForce(o.Force)
	ident, err := action.readIdentity(ctx, cp.karmada, o.ClusterName, member)
	if err != nil {
		return err
	}
	if err := action.checkIdentity(o.ClusterName, ident); err != nil {
		return err
	}
	cluster := ident.existing
	if cluster == nil {
		fmt.Fprintf(p.out, "%s: %s not found\n", onControlPlane, ref("cluster", "", o.ClusterName))
	}
	if cluster != nil {
		// The unjoin code path: delete, then wait until the finalizer let go.
		if err := deleteCluster(ctx, cp, cluster, clusterWait{enabled: o.Wait, timeout: o.Timeout, interval: o.pollInterval}, p); err != nil {
			return err
		}
	}
	// The agent's rights go with the Cluster (owner references); delete
	// them now rather than when the garbage collector comes round.
	kube, name := cp.kube, o.ClusterName
	objs := []object{
		clusterRoleBindingObject(kube, onControlPlane, names.AgentClusterRoleName(name)),
		clusterRoleObject(kube, onControlPlane, names.AgentClusterRoleName(name)),
		roleBindingObject(kube, onControlPlane, names.ExecutionNamespace(name), names.AgentWorkRoleName(name)),
		roleObject(kube, onControlPlane, names.ExecutionNamespace(name), names.AgentWorkRoleName(name)),
		roleBindingObject(kube, onControlPlane, names.LeaseNamespace, names.AgentLeaseRoleName(name)),
		roleObject(kube, onControlPlane, names.LeaseNamespace, names.AgentLeaseRoleName(name)),
	}
	for _, obj := range objs {
		if err := obj.delete(ctx, false, p); err != nil {
			return err
		}
	}
	return nil
}

// cleanMember deletes what register created in the member; objects
// without flotillactl's label are kept.
func (o *unregisterOptions) cleanMember(ctx context.Context, member kubernetes.Interface, p printer) error {
	ns := o.AgentNamespace
	for _, obj := range []object{
		agentDeploymentObject(member, ns, o.AgentName),
		secretObject(member, onMember, ns, names.AgentConfigSecret),
		clusterRoleBindingObject(member, onMember, agentClusterRole),
		clusterRoleObject(member, onMember, agentClusterRole),
		serviceAccountObject(member, ns, agentServiceAccount),
		namespaceObject(member, ns),
	} {
		if err := obj.delete(ctx, true, p); err != nil {
			return err
		}
	}
	return nil
}
