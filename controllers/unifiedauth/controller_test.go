package unifiedauth

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
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
