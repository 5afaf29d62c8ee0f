package unifiedauth

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func TestRBACReconciler(t *testing.T) {
	t.Parallel()
	proxyRole := func(name string, clusters ...string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.karmada.io"},
			Resources: []string{"clusters/proxy"}, ResourceNames: clusters, Verbs: []string{"get"}}}}
	}
	view := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}}
	bind := func(name, role string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: role}, Subjects: subjects}
	}
	user := func(n string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.UserKind, Name: n} }
	group := func(n string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.GroupKind, Name: n} }
	sa := func(ns, n string) rbacv1.Subject {
		return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: n}
	}
	impersonate := func(resource string, names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, ResourceNames: names, Verbs: []string{"impersonate"}}
	}
	extras := rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}}
	roles := []*rbacv1.ClusterRole{proxyRole("proxy-member1", "member1"), proxyRole("proxy-member2", "member2"), proxyRole("proxy-all"), view}

	tests := []struct {
		name     string
		bindings []*rbacv1.ClusterRoleBinding
		listErr  error
		// wantRules are the rules of the member ClusterRole.
		wantRules []rbacv1.PolicyRule
		wantErr   bool
	}{
		{name: "users of the cluster: exactly their names", bindings: []*rbacv1.ClusterRoleBinding{
			bind("a", "proxy-member1", user("bob"), user("alice")), bind("b", "proxy-member2", user("mallory"))},
			wantRules: []rbacv1.PolicyRule{impersonate("users", "alice", "bob"), extras}},
		{name: "a group may proxy: any user, only the groups granted", bindings: []*rbacv1.ClusterRoleBinding{
			bind("a", "proxy-member1", sa("default", "tom"), user("alice"), group("devs"))},
			wantRules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}},
				impersonate("serviceaccounts", "tom"),
				impersonate("groups", "devs", "system:serviceaccounts", "system:serviceaccounts:default"),
				extras}},
		{name: "a role for every cluster counts", bindings: []*rbacv1.ClusterRoleBinding{bind("a", "proxy-all", user("carol"))},
			wantRules: []rbacv1.PolicyRule{impersonate("users", "carol"), extras}},
		{name: "roles without proxy, missing roles, Roles: nobody", bindings: []*rbacv1.ClusterRoleBinding{
			bind("a", "view", user("mallory")), bind("b", "gone", user("eve")),
			{ObjectMeta: metav1.ObjectMeta{Name: "c"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "proxy-member1"}, Subjects: []rbacv1.Subject{user("eve")}}}},
		{name: "host RBAC unreadable: an error", listErr: errors.New("not synced"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := rbacReconciler{
				listBindings: func() ([]*rbacv1.ClusterRoleBinding, error) { return tc.bindings, tc.listErr },
				getRole: func(name string) (*rbacv1.ClusterRole, error) {
					for _, r := range roles {
						if r.Name == name {
							return r, nil
						}
					}
					return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), name)
				},
			}
			cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
				Spec: clusterv1alpha1.ClusterSpec{ImpersonatorSecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "s"}}}
			objs, err := r.reconcile(cluster)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			managed := map[string]string{"karmada.io/managed": "true"}
			want := []memberObject{
				{kind: "ClusterRole", obj: &rbacv1.ClusterRole{
					TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
					ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName, Labels: managed}, Rules: tc.wantRules}},
				{kind: "ClusterRoleBinding", obj: &rbacv1.ClusterRoleBinding{
					TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
					ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName, Labels: managed},
					RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: ImpersonatorName},
					Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: ImpersonatorName, Namespace: "karmada-cluster"}}}},
			}
			if diff := cmp.Diff(want, objs, cmp.AllowUnexported(memberObject{})); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}
