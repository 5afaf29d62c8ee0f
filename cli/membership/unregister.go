package membership

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// UnregisterOptions holds the flags of unregister. Use NewUnregisterOptions.
type UnregisterOptions struct {
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

// NewUnregisterOptions returns unregister's defaults.
func NewUnregisterOptions() *UnregisterOptions {
	return &UnregisterOptions{
		AgentNamespace: names.SystemNamespace,
		AgentName:      AgentRelease,
		Wait:           true,
		Timeout:        60 * time.Second,
		pollInterval:   time.Second,
	}
}

// Run unregisters the cluster args names (unregister CLUSTER_NAME): its
// agent from the member of --kubeconfig and, with
// --control-plane-kubeconfig, its Cluster; what changed is reported on out.
func (o *UnregisterOptions) Run(ctx context.Context, args []string, out io.Writer) error {
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
	var cp *controlplane.Clients
	if o.ControlPlaneKubeconfig != "" {
		cfg, err := kubeconfigLoader(o.ControlPlaneKubeconfig, o.ControlPlaneContext).ClientConfig()
		if err != nil {
			return fmt.Errorf("unregister cluster %q: loading the control-plane kubeconfig: %w", o.ClusterName, err)
		}
		c, err := controlplane.NewClients(cfg)
		if err != nil {
			return fmt.Errorf("unregister cluster %q: %w", o.ClusterName, err)
		}
		cp = &c
	}
	if err := o.run(ctx, cp, m.kube, out); err != nil {
		return fmt.Errorf("unregister cluster %q: %w", o.ClusterName, err)
	}
	return nil
}

func (o *UnregisterOptions) validate() error {
	f := memberFlags{cluster: o.ClusterName, namespaceFlag: "--agent-namespace", namespace: o.AgentNamespace}
	if o.Wait {
		f.timeoutFlag, f.timeout = "--wait", o.Timeout
	}
	return utilerrors.NewAggregate(f.validate())
}

// run unregisters; cp is nil without --control-plane-kubeconfig.
func (o *UnregisterOptions) run(ctx context.Context, cp *controlplane.Clients, member kubernetes.Interface, out io.Writer) error {
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

func (o *UnregisterOptions) removeFromControlPlane(ctx context.Context, cp controlplane.Clients, member kubernetes.Interface, p printer) error {
	action := unregisterAction.withForce(o.Force)
	ident, err := action.readIdentity(ctx, cp.Karmada, o.ClusterName, member)
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
	kube, name := cp.Kube, o.ClusterName
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
func (o *UnregisterOptions) cleanMember(ctx context.Context, member kubernetes.Interface, p printer) error {
	ns := o.AgentNamespace
	for _, obj := range []object{
		agentDeploymentObject(member, ns, o.AgentName),
		secretObject(member, onMember, ns, names.AgentConfigSecret),
		clusterRoleBindingObject(member, onMember, AgentClusterRole),
		clusterRoleObject(member, onMember, AgentClusterRole),
		serviceAccountObject(member, ns, AgentServiceAccount),
		namespaceObject(member, ns),
	} {
		if err := obj.delete(ctx, true, p); err != nil {
			return err
		}
	}
	return nil
}
