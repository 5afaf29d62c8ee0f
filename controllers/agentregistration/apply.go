package agentregistration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/names"
)

// patchFunc is the Patch method of a typed client.
type patchFunc[T any] func(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)

// apply server-side applies obj (a typed object with its TypeMeta set) as
// fieldManager, taking back fields others changed. An unchanged object is
// not rewritten.
func apply[T any](ctx context.Context, patch patchFunc[T], fieldManager, what string, obj metav1.Object) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", what, err)
	}
	if _, err := patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}); err != nil {
		return fmt.Errorf("applying %s: %w", what, err)
	}
	return nil
}

// ApplyBootstrapRBAC applies BootstrapRBAC to the host.
func ApplyBootstrapRBAC(ctx context.Context, kube kubernetes.Interface, fieldManager string) error {
	o := BootstrapRBAC()
	rbac := kube.RbacV1()
	var errs []error
	for _, r := range o.ClusterRoles {
		errs = append(errs, apply(ctx, rbac.ClusterRoles().Patch, fieldManager, "clusterrole "+r.Name, r))
	}
	for _, b := range o.ClusterRoleBindings {
		errs = append(errs, apply(ctx, rbac.ClusterRoleBindings().Patch, fieldManager, "clusterrolebinding "+b.Name, b))
	}
	for _, r := range o.Roles {
		errs = append(errs, apply(ctx, rbac.Roles(r.Namespace).Patch, fieldManager, "role "+r.Namespace+"/"+r.Name, r))
	}
	for _, b := range o.RoleBindings {
		errs = append(errs, apply(ctx, rbac.RoleBindings(b.Namespace).Patch, fieldManager, "rolebinding "+b.Namespace+"/"+b.Name, b))
	}
	return errors.Join(errs...)
}

// applyAgentRBAC makes the host hold o: the namespaces of the Roles first
// (the execution namespace is also created by the cluster controller;
// whoever comes first wins), then the RBAC, then the Lease, which is only
// created: the agent renews it.
func applyAgentRBAC(ctx context.Context, kube kubernetes.Interface, o AgentRBACObjects) error {
	for _, r := range o.Roles {
		if err := ensureNamespace(ctx, kube, r.Namespace); err != nil {
			return err
		}
	}
	rbac := kube.RbacV1()
	if err := apply(ctx, rbac.ClusterRoles().Patch, names.AgentRegistrationController, "clusterrole "+o.ClusterRole.Name, o.ClusterRole); err != nil {
		return err
	}
	if err := apply(ctx, rbac.ClusterRoleBindings().Patch, names.AgentRegistrationController, "clusterrolebinding "+o.ClusterRoleBinding.Name, o.ClusterRoleBinding); err != nil {
		return err
	}
	for _, r := range o.Roles {
		if err := apply(ctx, rbac.Roles(r.Namespace).Patch, names.AgentRegistrationController, "role "+r.Namespace+"/"+r.Name, r); err != nil {
			return err
		}
	}
	for _, b := range o.RoleBindings {
		if err := apply(ctx, rbac.RoleBindings(b.Namespace).Patch, names.AgentRegistrationController, "rolebinding "+b.Namespace+"/"+b.Name, b); err != nil {
			return err
		}
	}
	leases := kube.CoordinationV1().Leases(o.Lease.Namespace)
	if _, err := leases.Create(ctx, o.Lease, metav1.CreateOptions{FieldManager: names.AgentRegistrationController}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating lease %s/%s: %w", o.Lease.Namespace, o.Lease.Name, err)
	}
	return nil
}

func ensureNamespace(ctx context.Context, kube kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{names.SystemLabel: "true"}}}
	_, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: names.AgentRegistrationController})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
