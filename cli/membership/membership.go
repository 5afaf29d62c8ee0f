package membership

// The checks join, unjoin, register and unregister share: the flags that
// name a member and its credentials, and the member's identity (the uid of
// its kube-system namespace, a Cluster's spec.id) against the Cluster of
// that name on the control plane. Each command describes itself as a
// memberAction; the decision is one pure function, checkIdentity.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	versioned "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
)

// memberFlags are the flags every member command validates alike.
type memberFlags struct {
	cluster string
	// namespaceFlag names the flag of namespace, the member namespace of
	// the credentials (--cluster-namespace, --agent-namespace).
	namespaceFlag, namespace string
	// timeoutFlag, when set, names the flag of timeout, which must then be
	// positive.
	timeoutFlag string
	timeout     time.Duration
}

// validate returns what is wrong with the flags.
func (f memberFlags) validate() []error {
	var errs []error
	if msgs := clustervalidation.ValidateClusterName(f.cluster, false); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("invalid cluster name %q: %s", f.cluster, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Label(f.namespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("invalid %s %q: %s", f.namespaceFlag, f.namespace, strings.Join(msgs, "; ")))
	}
	if f.timeoutFlag != "" && f.timeout <= 0 {
		errs = append(errs, fmt.Errorf("%s must be positive, got %s", f.timeoutFlag, f.timeout))
	}
	return errs
}

// memberAction is a command that adds a member to the control plane or
// removes one, as the identity check needs to know it.
type memberAction struct {
	// verb is the command (join, unjoin, register, unregister).
	verb string
	// mode is the sync mode of the Clusters the command manages.
	mode clusterv1alpha1.ClusterSyncMode
	// adds: the command registers the member (join, register); otherwise
	// it removes it (unjoin, unregister).
	adds bool
	// force skips the check (--force of join, unjoin and unregister).
	force bool
	// forceable says whether the command has a --force that skips the
	// check, for the hints of its errors (register's --force does not).
	forceable bool
	// strictID: a Cluster without an id is not this member's.
	strictID bool
}

var (
	joinAction       = memberAction{verb: "join", mode: clusterv1alpha1.Push, adds: true, forceable: true}
	unjoinAction     = memberAction{verb: "unjoin", mode: clusterv1alpha1.Push, forceable: true}
	registerAction   = memberAction{verb: "register", mode: clusterv1alpha1.Pull, adds: true, strictID: true}
	unregisterAction = memberAction{verb: "unregister", mode: clusterv1alpha1.Pull, forceable: true}
)

// withForce returns a with --force as given.
func (a memberAction) withForce(force bool) memberAction {
	a.force = force && a.forceable
	return a
}

// remover is the command that removes a Cluster of mode.
func remover(mode clusterv1alpha1.ClusterSyncMode) string {
	if mode == clusterv1alpha1.Pull {
		return unregisterAction.verb
	}
	return unjoinAction.verb
}

// memberIdentity is what the identity check reads.
type memberIdentity struct {
	// id is the member's id; empty when the member is not at hand (unjoin
	// without --cluster-kubeconfig) or its id is not needed.
	id string
	// existing is the Cluster of the name, or nil.
	existing *clusterv1alpha1.Cluster
	// sameID names the other Clusters with the member's id; read only for
	// commands that add.
	sameID []string
}

// checkIdentity returns why the action must not go ahead, or nil.
//
// A Cluster being deleted cannot be registered again yet. A Cluster of the
// other mode belongs to the other pair of commands. A Cluster whose id is
// not the member's describes another member: adding would take its name,
// removing would clean up the wrong member. A member registered under
// another name is not registered twice. Register matches ids as the
// control plane's agent registration does: an empty id matches nothing;
// the other commands take a Cluster without an id for this member's, as
// karmadactl does.
func (a memberAction) checkIdentity(name string, m memberIdentity) error {
	if a.force {
		return nil
	}
	orForce := func(s string) string {
		if a.forceable {
			return s
		}
		return ""
	}
	if c := m.existing; c != nil {
		switch {
		case a.adds && c.DeletionTimestamp != nil:
			return fmt.Errorf("cluster %s on the control plane is being deleted; retry when it is gone", name)
		case c.Spec.SyncMode != a.mode && a.adds:
			return fmt.Errorf("cluster %s is registered in %s mode; %s it first%s", name, c.Spec.SyncMode, remover(c.Spec.SyncMode),
				orForce(fmt.Sprintf(" or pass --force to switch it to %s", a.mode)))
		case c.Spec.SyncMode != a.mode:
			return fmt.Errorf("cluster %s is registered in %s mode: use %s%s; nothing was deleted", name, c.Spec.SyncMode, remover(c.Spec.SyncMode), orForce(" (or --force)"))
		case m.id == "" || c.Spec.ID == m.id || (c.Spec.ID == "" && !a.strictID):
		case a.adds:
			return fmt.Errorf("cluster %s is already registered for another member (id %q; this member's kube-system uid is %s); %s it first, pick another name%s",
				name, c.Spec.ID, m.id, remover(a.mode), orForce(", or pass --force to take it over"))
		default:
			return fmt.Errorf("the member kubeconfig points at a cluster with kube-system uid %s, but cluster %s has id %s; nothing was deleted%s",
				m.id, name, c.Spec.ID, orForce(fmt.Sprintf(" (pass --force to %s this member anyway)", a.verb)))
		}
	}
	if a.adds && len(m.sameID) > 0 {
		return fmt.Errorf("this member (id %s) is already registered as cluster %s; %s it first%s",
			m.id, strings.Join(m.sameID, ", "), remover(a.mode), orForce(" or pass --force"))
	}
	return nil
}

// readIdentity reads what checkIdentity needs: the Cluster of the name
// and, when member is not nil and the check needs it, the member's id
// and, for commands that add, the other Clusters with that id.
func (a memberAction) readIdentity(ctx context.Context, karmada versioned.Interface, name string, member kubernetes.Interface) (memberIdentity, error) {
	var m memberIdentity
	clusters := karmada.ClusterV1alpha1().Clusters()
	existing, err := clusters.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return m, fmt.Errorf("reading cluster %s on the control plane: %w", name, err)
	default:
		m.existing = existing
	}
	needID := a.adds || (!a.force && m.existing != nil && (m.existing.Spec.ID != "" || a.strictID))
	if member == nil || !needID {
		return m, nil
	}
	if m.id, err = memberID(ctx, member); err != nil {
		return m, err
	}
	if !a.adds || a.force {
		return m, nil
	}
	list, err := clusters.List(ctx, metav1.ListOptions{})
	if err != nil {
		return m, fmt.Errorf("listing clusters on the control plane to check that id %s is not registered yet: %w", m.id, err)
	}
	for i := range list.Items {
		if c := &list.Items[i]; c.Name != name && c.Spec.ID == m.id {
			m.sameID = append(m.sameID, c.Name)
		}
	}
	slices.Sort(m.sameID)
	return m, nil
}

// memberID is the id Karmada gives a member: the uid of its kube-system namespace.
func memberID(ctx context.Context, kube kubernetes.Interface) (string, error) {
	ns, err := kube.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading the kube-system namespace of the member (its uid is the cluster id): %w", err)
	}
	if ns.UID == "" {
		return "", errors.New("the kube-system namespace of the member has no uid")
	}
	return string(ns.UID), nil
}
