package unifiedauth

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
)

func TestGrantsProxy(t *testing.T) {
	t.Parallel()
	rule := func(groups, resources, names []string) []rbacv1.PolicyRule {
		return []rbacv1.PolicyRule{{APIGroups: groups, Resources: resources, ResourceNames: names, Verbs: []string{"get"}}}
	}
	tests := []struct {
		name  string
		rules []rbacv1.PolicyRule
		want  bool
	}{
		{"named cluster", rule([]string{"cluster.karmada.io"}, []string{"clusters/proxy"}, []string{"member1"}), true},
		{"other cluster", rule([]string{"cluster.karmada.io"}, []string{"clusters/proxy"}, []string{"member2"}), false},
		{"every cluster", rule([]string{"cluster.karmada.io"}, []string{"clusters/proxy"}, nil), true},
		{"wildcards", rule([]string{"*"}, []string{"*"}, nil), true},
		{"clusters without proxy", rule([]string{"cluster.karmada.io"}, []string{"clusters"}, nil), false},
		{"search proxying", rule([]string{"search.karmada.io"}, []string{"proxying/proxy"}, nil), true},
		{"wrong group", rule([]string{"apps"}, []string{"clusters/proxy"}, nil), false},
		{"no verbs", []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := grantsProxy(tc.rules, "member1"); got != tc.want {
				t.Errorf("grantsProxy = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestImpersonationRules(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset(
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-member1"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"*"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "tom"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "proxy-member1"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "tom"}, {Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.GroupKind, Name: "devs"}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "proxy-member2"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "bob"}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "proxy-member2"}, Rules: []rbacv1.PolicyRule{{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member2"}, Verbs: []string{"get"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "viewers"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "mallory"}}},
	)
	f := informers.NewSharedInformerFactory(cs, 0)
	roles, bindings := f.Rbac().V1().ClusterRoles(), f.Rbac().V1().ClusterRoleBindings()
	roles.Informer()
	bindings.Informer()
	f.Start(t.Context().Done())
	f.WaitForCacheSync(t.Context().Done())
	c := &Controller{roles: roles.Lister(), bindings: bindings.Lister()}

	rules, err := c.impersonationRules("member1")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range rules {
		got[r.Resources[0]] = r.ResourceNames
	}
	want := map[string][]string{
		"users":           nil, // the group devs may proxy: any user, with only the listed groups
		"serviceaccounts": {"tom"},
		"groups":          {"devs", "system:serviceaccounts", "system:serviceaccounts:default"},
		"*":               nil,
	}
	for res, names := range want {
		if g, ok := got[res]; !ok || len(g) != len(names) {
			t.Errorf("%s: got %v, want %v", res, g, names)
			continue
		}
		for i := range names {
			if got[res][i] != names[i] {
				t.Errorf("%s: got %v, want %v", res, got[res], names)
			}
		}
	}
	// On member2 only bob may proxy: exactly his name.
	rules, _ = c.impersonationRules("member2")
	if len(rules) != 2 || rules[0].Resources[0] != "users" || len(rules[0].ResourceNames) != 1 || rules[0].ResourceNames[0] != "bob" {
		t.Errorf("member2: got rules %v, want impersonation of user bob only", rules)
	}
	if rules, _ := c.impersonationRules("member3"); len(rules) != 0 {
		t.Errorf("member3: nobody may proxy there, got rules %v", rules)
	}
}
