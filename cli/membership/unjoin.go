package membership

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/names"
)

// UnjoinOptions holds the flags of unjoin. Zero values are never valid; use NewUnjoinOptions.
type UnjoinOptions struct {
	ClusterName       string
	ClusterKubeconfig string
	ClusterContext    string
	ClusterNamespace  string
	Wait              bool
	Timeout           time.Duration
	DryRun            bool
	Force             bool

	// pollInterval is how often to check whether the Cluster is gone.
	pollInterval time.Duration
}

// NewUnjoinOptions returns unjoin's defaults.
func NewUnjoinOptions() *UnjoinOptions {
	return &UnjoinOptions{
		ClusterNamespace: names.SecretNamespace,
		Wait:             true,
		Timeout:          60 * time.Second,
		pollInterval:     time.Second,
	}
}

// Run unjoins the cluster args names (unjoin CLUSTER_NAME) from the
// control plane flags locates and, with --cluster-kubeconfig, cleans up
// the member; what changed is reported on out.
func (o *UnjoinOptions) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, args []string, out io.Writer) error {
	if err := o.complete(args); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return fmt.Errorf("unjoin cluster %q: %w", o.ClusterName, err)
	}
	var m *memberCluster
	if o.ClusterKubeconfig != "" {
		if m, err = loadMember(o.ClusterKubeconfig, o.ClusterContext, o.ClusterName); err != nil {
			return fmt.Errorf("unjoin cluster %q: %w", o.ClusterName, err)
		}
	}
	return o.run(ctx, cp, m, out)
}

func (o *UnjoinOptions) complete(args []string) error {
	if len(args) != 1 {
		return errors.New("unjoin takes exactly one argument, the cluster name")
	}
	o.ClusterName = args[0]
	return nil
}

func (o *UnjoinOptions) validate() error {
	f := memberFlags{cluster: o.ClusterName, namespaceFlag: "--cluster-namespace", namespace: o.ClusterNamespace}
	if o.Wait {
		f.timeoutFlag, f.timeout = "--wait", o.Timeout
	}
	return utilerrors.NewAggregate(f.validate())
}

// run unjoins the cluster; m is nil when no member kubeconfig was given.
func (o *UnjoinOptions) run(ctx context.Context, cp controlplane.Clients, m *memberCluster, out io.Writer) error {
	p := printer{out: out, dryRun: o.DryRun}
	if err := o.unjoin(ctx, cp, m, p); err != nil {
		return fmt.Errorf("unjoin cluster %q: %w", o.ClusterName, err)
	}
	switch {
	case o.DryRun:
		fmt.Fprintf(out, "cluster(%s) would be unjoined (dry run: nothing was deleted)\n", o.ClusterName)
	case m == nil:
		fmt.Fprintf(out, "cluster(%s) is unjoined; the member was not cleaned up (no --cluster-kubeconfig)\n", o.ClusterName)
	default:
		fmt.Fprintf(out, "cluster(%s) is unjoined successfully\n", o.ClusterName)
	}
	return nil
}

func (o *UnjoinOptions) unjoin(ctx context.Context, cp controlplane.Clients, m *memberCluster, p printer) error {
	n := joinNames{cluster: o.ClusterName, namespace: o.ClusterNamespace}
	// Refuse to clean up a member the Cluster does not describe: it may be
	// another member joined under its own name.
	action := unjoinAction.withForce(o.Force)
	var member kubernetes.Interface
	if m != nil {
		member = m.kube
	}
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
	} else if err := o.deleteCluster(ctx, cp, cluster, p); err != nil {
		return err
	}

	for _, name := range []string{n.secret(), n.impersonatorSecret()} {
		// Deleted by name: the Cluster owned them, whoever created them.
		if err := secretObject(cp.Kube, onControlPlane, n.namespace, name).delete(ctx, false, p); err != nil {
			return err
		}
	}

	if m == nil {
		return nil
	}
	return cleanMember(ctx, m.kube, n, p)
}

// deleteCluster deletes the Cluster and, with --wait, waits until it is gone:
// its finalizer lets the control plane remove what it propagated to the
// member, which needs the credentials unjoin deletes next.
func (o *UnjoinOptions) deleteCluster(ctx context.Context, cp controlplane.Clients, cluster *clusterv1alpha1.Cluster, p printer) error {
	return deleteCluster(ctx, cp, cluster, clusterWait{enabled: o.Wait, timeout: o.Timeout, interval: o.pollInterval}, p)
}

// clusterWait is how deleteCluster waits for a deleted Cluster to go.
type clusterWait struct {
	enabled           bool
	timeout, interval time.Duration
}

// deleteCluster deletes cluster (guarded by its uid) and, when w is
// enabled, waits until it is gone.
func deleteCluster(ctx context.Context, cp controlplane.Clients, cluster *clusterv1alpha1.Cluster, w clusterWait, p printer) error {
	clusters := cp.Karmada.ClusterV1alpha1().Clusters()
	if !p.dryRun {
		err := clusters.Delete(ctx, cluster.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cluster.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting cluster %s on the control plane: %w", cluster.Name, err)
		}
	}
	p.changed(onControlPlane, ref("cluster", "", cluster.Name), "deleted")
	if p.dryRun || !w.enabled {
		return nil
	}
	var last *clusterv1alpha1.Cluster
	err := wait.PollUntilContextTimeout(ctx, w.interval, w.timeout, true, func(ctx context.Context) (bool, error) {
		c, err := clusters.Get(ctx, cluster.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, fmt.Errorf("reading cluster %s on the control plane while waiting for its deletion: %w", cluster.Name, err)
		}
		if c.UID != cluster.UID {
			return false, fmt.Errorf("cluster %s was created again while unjoin waited for its deletion; its credentials were kept", cluster.Name)
		}
		last = c
		return false, nil
	})
	if err != nil {
		if wait.Interrupted(err) && last != nil {
			return fmt.Errorf("cluster %s is still on the control plane after %s (finalizers %v); its credentials were kept so the control plane can finish: run unjoin again later, or with --wait=false: %w",
				cluster.Name, w.timeout, last.Finalizers, err)
		}
		return err
	}
	return nil
}

// cleanMember deletes, in the member, the objects join created there, in
// the reverse order of join, by name (karmadactl's join labels nothing).
// The impersonator ServiceAccount and the namespace are shared by every cluster
// name the member was joined under (e.g. by two control planes); they are
// kept while another such join remains.
func cleanMember(ctx context.Context, kube kubernetes.Interface, n joinNames, p printer) error {
	own := []object{
		clusterRoleBindingObject(kube, onMember, n.clusterRole()),
		clusterRoleObject(kube, onMember, n.clusterRole()),
		secretObject(kube, onMember, n.namespace, n.serviceAccount()),
		serviceAccountObject(kube, n.namespace, n.serviceAccount()),
	}
	for _, o := range own {
		// By name: the names embed the cluster's, and the member is the
		// Cluster's (its id was checked), whether flotillactl join or
		// karmadactl join (which labels nothing) created them.
		if err := o.delete(ctx, false, p); err != nil {
			return err
		}
	}
	others, err := otherJoins(ctx, kube, n)
	if err != nil {
		return err
	}
	if len(others) > 0 {
		fmt.Fprintf(p.out, "%s: %s, %s and namespace/%s kept: still used by %s\n", onMember,
			ref("serviceaccount", n.namespace, impersonatorServiceAccount), ref("secret", n.namespace, impersonatorServiceAccount),
			n.namespace, strings.Join(others, ", "))
		return nil
	}
	shared := []object{
		secretObject(kube, onMember, n.namespace, impersonatorServiceAccount),
		serviceAccountObject(kube, n.namespace, impersonatorServiceAccount),
	}
	for _, o := range shared {
		// No other join uses them: by name, as karmadactl unjoin does.
		if err := o.delete(ctx, false, p); err != nil {
			return err
		}
	}
	// The namespace may hold what others put there: only join's own goes.
	return namespaceObject(kube, n.namespace).delete(ctx, true, p)
}

// otherJoins lists the ClusterRoleBindings of other joins of this member
// (other cluster names) that use the same namespace: flotillactl's or
// karmadactl's, told by their names and subjects.
func otherJoins(ctx context.Context, kube kubernetes.Interface, n joinNames) ([]string, error) {
	list, err := kube.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing clusterrolebindings on the member to find other joins: %w", err)
	}
	prefix := joinNames{cluster: "", namespace: n.namespace}.clusterRole()
	var others []string
	for i := range list.Items {
		crb := &list.Items[i]
		if crb.Name == n.clusterRole() || !strings.HasPrefix(crb.Name, prefix) || crb.DeletionTimestamp != nil {
			continue
		}
		for _, s := range crb.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == n.namespace {
				others = append(others, ref("clusterrolebinding", "", crb.Name))
				break
			}
		}
	}
	return others, nil
}

// object is one object unjoin may delete.
type object struct {
	where, what string
	get         func(context.Context) (metav1.Object, error)
	del         func(context.Context, metav1.DeleteOptions) error
}

// delete deletes the object if it exists and, when onlyOurs, if join created
// it. The delete is conditional on the uid read, so an object created again
// meanwhile is left alone. An object already gone is not an error.
func (o object) delete(ctx context.Context, onlyOurs bool, p printer) error {
	obj, err := o.get(ctx)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("reading %s on the %s: %w", o.what, o.where, err)
	case onlyOurs && !createdByUs(obj):
		fmt.Fprintf(p.out, "%s: %s kept: not created by flotillactl (no label %s=%s)\n", o.where, o.what, names.ManagedByLabel, controlplane.UserAgent)
		return nil
	}
	if !p.dryRun {
		uid := obj.GetUID()
		err := o.del(ctx, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s on the %s: %w", o.what, o.where, err)
		}
	}
	p.changed(o.where, o.what, "deleted")
	return nil
}

func secretObject(kube kubernetes.Interface, where, namespace, name string) object {
	c := kube.CoreV1().Secrets(namespace)
	return object{where: where, what: ref("secret", namespace, name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

func serviceAccountObject(kube kubernetes.Interface, namespace, name string) object {
	c := kube.CoreV1().ServiceAccounts(namespace)
	return object{where: onMember, what: ref("serviceaccount", namespace, name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

func namespaceObject(kube kubernetes.Interface, name string) object {
	c := kube.CoreV1().Namespaces()
	return object{where: onMember, what: ref("namespace", "", name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

func clusterRoleObject(kube kubernetes.Interface, where, name string) object {
	c := kube.RbacV1().ClusterRoles()
	return object{where: where, what: ref("clusterrole", "", name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

func clusterRoleBindingObject(kube kubernetes.Interface, where, name string) object {
	c := kube.RbacV1().ClusterRoleBindings()
	return object{where: where, what: ref("clusterrolebinding", "", name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

func roleObject(kube kubernetes.Interface, where, namespace, name string) object {
	c := kube.RbacV1().Roles(namespace)
	return object{where: where, what: ref("role", namespace, name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}

func roleBindingObject(kube kubernetes.Interface, where, namespace, name string) object {
	c := kube.RbacV1().RoleBindings(namespace)
	return object{where: where, what: ref("rolebinding", namespace, name),
		get: func(ctx context.Context) (metav1.Object, error) { return c.Get(ctx, name, metav1.GetOptions{}) },
		del: func(ctx context.Context, opts metav1.DeleteOptions) error { return c.Delete(ctx, name, opts) }}
}
