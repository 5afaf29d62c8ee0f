package inventory

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	multiclusterv1alpha1 "github.com/flotilla-io/flotilla/apis/multicluster/v1alpha1"
	"github.com/flotilla-io/flotilla/inventory"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestUsersCannotWriteInventory: a user whose RBAC allows every verb on
// ClusterProfiles and PlacementDecisions still cannot create, change,
// unlabel or delete Flotilla's: each is refused with the reason, and the
// profile is unchanged. Profiles of another manager stay the user's to
// write.
func TestUsersCannotWriteInventory(t *testing.T) {
	waitProfile(t, "member1", time.Minute, healthy("True"))
	host := framework.HostClient(t)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "inventory-writer"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{multiclusterv1alpha1.GroupName},
		Resources: []string{"clusterprofiles", "clusterprofiles/status", "placementdecisions"}, Verbs: []string{"*"}}}}
	if _, err := host.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "inventory-writer"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "inventory-writer"}}}
	if _, err := host.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	user := hostDynamic(t, framework.ServiceAccountConfig(t, "inventory-writer"))
	profiles := user.Resource(multiclusterv1alpha1.ClusterProfiles).Namespace(names.InventoryNamespace)
	before, err := profileOf(t.Context(), hostDynamic(t, nil), "member1")
	if err != nil {
		t.Fatal(err)
	}

	ours := func(kind, name, namespace string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": multiclusterv1alpha1.SchemeGroupVersion.String(), "kind": kind}}
		u.SetName(name)
		u.SetNamespace(namespace)
		u.SetLabels(map[string]string{multiclusterv1alpha1.LabelClusterManager: inventory.Manager})
		return u
	}
	fake := ours(multiclusterv1alpha1.ClusterProfileKind, "member9", names.InventoryNamespace)
	fake.Object["spec"] = map[string]any{"clusterManager": map[string]any{"name": inventory.Manager}}
	decision := ours(multiclusterv1alpha1.PlacementDecisionKind, "forged-0", "default")
	decision.Object["decisions"] = []any{map[string]any{"clusterProfileRef": map[string]any{"name": "member1"}}}

	refused := map[string]func(ctx context.Context) error{
		"create a profile": func(ctx context.Context) error {
			_, err := profiles.Create(ctx, fake, metav1.CreateOptions{})
			return err
		},
		"patch a profile's status": func(ctx context.Context) error {
			_, err := profiles.Patch(ctx, "member1", types.MergePatchType, []byte(`{"status":{"version":{"kubernetes":"v0.0.1"}}}`), metav1.PatchOptions{}, "status")
			return err
		},
		"remove the manager label": func(ctx context.Context) error {
			_, err := profiles.Patch(ctx, "member1", types.MergePatchType, []byte(`{"metadata":{"labels":{"`+multiclusterv1alpha1.LabelClusterManager+`":null}}}`), metav1.PatchOptions{})
			return err
		},
		"delete a profile": func(ctx context.Context) error {
			return profiles.Delete(ctx, "member1", metav1.DeleteOptions{})
		},
		"create a decision": func(ctx context.Context) error {
			_, err := user.Resource(multiclusterv1alpha1.PlacementDecisions).Namespace("default").Create(ctx, decision, metav1.CreateOptions{})
			return err
		},
	}
	for what, write := range refused {
		// The policy is applied when the server starts; its binding takes
		// effect on the host a moment later.
		framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
			err := write(ctx)
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "read-only for users") {
				return fmt.Sprintf("%s as a user with RBAC for it: %v, want Forbidden by Flotilla's policy", what, err)
			}
			return ""
		})
	}
	after, err := profileOf(t.Context(), hostDynamic(t, nil), "member1")
	if err != nil {
		t.Fatal(err)
	}
	if after.GetUID() != before.GetUID() || after.GetLabels()[multiclusterv1alpha1.LabelClusterManager] != inventory.Manager {
		t.Errorf("member1's profile changed: uid %s → %s, labels %v", before.GetUID(), after.GetUID(), after.GetLabels())
	}
	if v, _, _ := unstructured.NestedString(after.Object, "status", "version", "kubernetes"); v == "v0.0.1" {
		t.Error("member1's profile status took the user's version")
	}

	// Another manager's profile is the user's business.
	other := ours(multiclusterv1alpha1.ClusterProfileKind, "elsewhere", "default")
	other.SetLabels(map[string]string{multiclusterv1alpha1.LabelClusterManager: "another-manager"})
	other.Object["spec"] = map[string]any{"clusterManager": map[string]any{"name": "another-manager"}}
	others := user.Resource(multiclusterv1alpha1.ClusterProfiles).Namespace("default")
	if _, err := others.Create(t.Context(), other, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating another manager's profile: %v", err)
	}
	if err := others.Delete(t.Context(), "elsewhere", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting another manager's profile: %v", err)
	}
}
