package membership

import (
	"bytes"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// The ensure* helpers make one object match what join wants: they read it,
// create it if missing (with createdLabels), update only what differs, and do
// nothing when it already matches, so running join again writes nothing.
// Labels are never added to objects join did not create: unjoin must leave
// those alone. In dry-run mode they read but do not write.

// ensureNamespace makes sure a namespace exists.
func ensureNamespace(ctx context.Context, kube kubernetes.Interface, name, where string, p printer) error {
	ns, err := kube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		if ns.DeletionTimestamp != nil {
			return fmt.Errorf("namespace %s on the %s is being deleted; retry when it is gone", name, where)
		}
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading namespace %s on the %s: %w", name, where, err)
	}
	if !p.dryRun {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: createdLabels()}}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s on the %s: %w", name, where, err)
		}
	}
	p.changed(where, ref("namespace", "", name), "created")
	return nil
}

// ensureServiceAccount makes sure a ServiceAccount exists.
func ensureServiceAccount(ctx context.Context, kube kubernetes.Interface, namespace, name string, p printer) error {
	sas := kube.CoreV1().ServiceAccounts(namespace)
	_, err := sas.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading serviceaccount %s/%s on the member: %w", namespace, name, err)
	}
	if !p.dryRun {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: createdLabels()}}
		if _, err := sas.Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating serviceaccount %s/%s on the member: %w", namespace, name, err)
		}
	}
	p.changed(onMember, ref("serviceaccount", namespace, name), "created")
	return nil
}

// tokenWait says how long and how often to poll for a token.
type tokenWait struct {
	timeout, interval time.Duration
}

// ensureTokenSecret makes sure the ServiceAccount has a token Secret of the
// same name (as karmadactl does) and waits for the token controller to fill
// it. ca.crt is written by the same update as token (when the controller has
// a root CA at all), so waiting for the token is enough. In dry-run mode it
// returns nil, nil when the token is not there yet.
func ensureTokenSecret(ctx context.Context, kube kubernetes.Interface, namespace, sa string, w tokenWait, p printer) (*corev1.Secret, error) {
	secrets := kube.CoreV1().Secrets(namespace)
	get := func(ctx context.Context) (*corev1.Secret, error) {
		s, err := secrets.Get(ctx, sa, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading token secret %s/%s on the member: %w", namespace, sa, err)
		}
		if s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != sa {
			return nil, fmt.Errorf("secret %s/%s on the member exists but is not a token secret of serviceaccount %s (type %q); delete it or use another --cluster-namespace", namespace, sa, sa, s.Type)
		}
		return s, nil
	}
	create := func(ctx context.Context) error {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace, Name: sa, Labels: createdLabels(),
				Annotations: map[string]string{corev1.ServiceAccountNameKey: sa},
			},
			Type: corev1.SecretTypeServiceAccountToken,
		}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating token secret %s/%s on the member: %w", namespace, sa, err)
		}
		p.changed(onMember, ref("secret", namespace, sa), "created")
		return nil
	}

	s, err := get(ctx)
	switch {
	case err == nil && tokenReady(s):
		return s, nil
	case apierrors.IsNotFound(err):
		if p.dryRun {
			p.changed(onMember, ref("secret", namespace, sa), "created")
			return nil, nil
		}
		if err := create(ctx); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	case p.dryRun:
		return nil, nil
	}

	err = wait.PollUntilContextTimeout(ctx, w.interval, w.timeout, true, func(ctx context.Context) (bool, error) {
		s, err = get(ctx)
		switch {
		case apierrors.IsNotFound(err):
			// The token controller deletes token secrets whose ServiceAccount
			// it cannot find (yet); create it again, as karmadactl does.
			return false, create(ctx)
		case err != nil:
			return false, err
		}
		return tokenReady(s), nil
	})
	if err != nil {
		if wait.Interrupted(err) {
			return nil, fmt.Errorf("waiting %s for the token controller to fill secret %s/%s on the member (is kube-controller-manager running?): %w", w.timeout, namespace, sa, err)
		}
		return nil, err
	}
	return s, nil
}

// clusterRoleRules grant everything: what karmadactl join gives the control plane.
func clusterRoleRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{rbacv1.APIGroupAll}, Resources: []string{rbacv1.ResourceAll}, Verbs: []string{rbacv1.VerbAll}},
		{NonResourceURLs: []string{rbacv1.NonResourceAll}, Verbs: []string{"get"}},
	}
}

// ensureClusterRole makes sure the ClusterRole exists with exactly rules.
func ensureClusterRole(ctx context.Context, kube kubernetes.Interface, name string, rules []rbacv1.PolicyRule, p printer) error {
	roles := kube.RbacV1().ClusterRoles()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cr, err := roles.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if !p.dryRun {
				cr = &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: createdLabels()}, Rules: rules}
				if _, err := roles.Create(ctx, cr, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating clusterrole %s on the member: %w", name, err)
				}
			}
			p.changed(onMember, ref("clusterrole", "", name), "created")
			return nil
		case err != nil:
			return fmt.Errorf("reading clusterrole %s on the member: %w", name, err)
		}
		if cr.AggregationRule == nil && equality.Semantic.DeepEqual(cr.Rules, rules) {
			return nil
		}
		cr.Rules, cr.AggregationRule = rules, nil
		if !p.dryRun {
			if _, err := roles.Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating the rules of clusterrole %s on the member: %w", name, err)
			}
		}
		p.changed(onMember, ref("clusterrole", "", name), "updated")
		return nil
	})
}

// ensureClusterRoleBinding makes sure the ClusterRoleBinding binds the
// ClusterRole of the same name to exactly the given ServiceAccount.
func ensureClusterRoleBinding(ctx context.Context, kube kubernetes.Interface, name, saNamespace, sa string, p printer) error {
	bindings := kube.RbacV1().ClusterRoleBindings()
	roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: saNamespace, Name: sa}}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crb, err := bindings.Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil && crb.RoleRef != roleRef:
			// roleRef is immutable: replace the binding, keeping its labels.
			if !p.dryRun {
				if err := bindings.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &crb.UID}}); err != nil && !apierrors.IsNotFound(err) {
					return fmt.Errorf("deleting clusterrolebinding %s on the member to change its roleRef: %w", name, err)
				}
				fresh := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: crb.Labels}, RoleRef: roleRef, Subjects: subjects}
				if _, err := bindings.Create(ctx, fresh, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("recreating clusterrolebinding %s on the member: %w", name, err)
				}
			}
			p.changed(onMember, ref("clusterrolebinding", "", name), "replaced")
			return nil
		case err == nil:
			if equality.Semantic.DeepEqual(crb.Subjects, subjects) {
				return nil
			}
			crb.Subjects = subjects
			if !p.dryRun {
				if _, err := bindings.Update(ctx, crb, metav1.UpdateOptions{}); err != nil {
					return fmt.Errorf("updating the subjects of clusterrolebinding %s on the member: %w", name, err)
				}
			}
			p.changed(onMember, ref("clusterrolebinding", "", name), "updated")
			return nil
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("reading clusterrolebinding %s on the member: %w", name, err)
		}
		if !p.dryRun {
			crb = &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: createdLabels()}, RoleRef: roleRef, Subjects: subjects}
			if _, err := bindings.Create(ctx, crb, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating clusterrolebinding %s on the member: %w", name, err)
			}
		}
		p.changed(onMember, ref("clusterrolebinding", "", name), "created")
		return nil
	})
}

// ensureOpaqueSecret makes sure a control-plane Secret holds exactly data.
func ensureOpaqueSecret(ctx context.Context, kube kubernetes.Interface, namespace, name string, data map[string][]byte, p printer) error {
	secrets := kube.CoreV1().Secrets(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if !p.dryRun {
				s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: createdLabels()}, Type: corev1.SecretTypeOpaque, Data: data}
				if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("creating secret %s/%s on the control plane: %w", namespace, name, err)
				}
			}
			p.changed(onControlPlane, ref("secret", namespace, name), "created")
			return nil
		case err != nil:
			return fmt.Errorf("reading secret %s/%s on the control plane: %w", namespace, name, err)
		case s.Type != "" && s.Type != corev1.SecretTypeOpaque:
			return fmt.Errorf("secret %s/%s on the control plane exists with type %q, want %q; delete it first", namespace, name, s.Type, corev1.SecretTypeOpaque)
		}
		if sameData(s.Data, data) {
			return nil
		}
		s.Data = data
		if !p.dryRun {
			if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating secret %s/%s on the control plane: %w", namespace, name, err)
			}
		}
		p.changed(onControlPlane, ref("secret", namespace, name), "updated")
		return nil
	})
}

func sameData(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// ensureOwner makes owner an owner (not controller, not blocking deletion) of
// a control-plane Secret, so deleting the Cluster collects it. A reference
// to an earlier object of the same kind and name (another uid) is replaced.
func ensureOwner(ctx context.Context, kube kubernetes.Interface, namespace, name string, owner metav1.OwnerReference, p printer) error {
	secrets := kube.CoreV1().Secrets(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) && p.dryRun:
			p.changed(onControlPlane, ref("secret", namespace, name), "owner set to cluster/"+owner.Name)
			return nil
		case err != nil:
			return fmt.Errorf("reading secret %s/%s on the control plane to set its owner: %w", namespace, name, err)
		}
		refs := withOwner(s.OwnerReferences, owner)
		if equality.Semantic.DeepEqual(refs, s.OwnerReferences) {
			return nil
		}
		s.OwnerReferences = refs
		if !p.dryRun {
			if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("setting the owner of secret %s/%s on the control plane: %w", namespace, name, err)
			}
		}
		p.changed(onControlPlane, ref("secret", namespace, name), "owner set to cluster/"+owner.Name)
		return nil
	})
}

// withOwner returns refs with owner in place of any reference to an object
// of the same apiVersion, kind and name, or appended.
func withOwner(refs []metav1.OwnerReference, owner metav1.OwnerReference) []metav1.OwnerReference {
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	found := false
	for _, r := range refs {
		if r.APIVersion == owner.APIVersion && r.Kind == owner.Kind && r.Name == owner.Name {
			if !found {
				out = append(out, owner)
				found = true
			}
			continue
		}
		out = append(out, r)
	}
	if !found {
		out = append(out, owner)
	}
	return out
}
