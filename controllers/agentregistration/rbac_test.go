package agentregistration

import (
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-helpers/auth/rbac/validation"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// allows says whether the agent's objects let its user do one request
// (namespace "" for cluster-scoped requests and for requests across all
// namespaces).
func (o AgentRBACObjects) allows(user, namespace, group, resource, name, verb string) bool {
	bound := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == rbacv1.UserKind && s.Name == user {
				return true
			}
		}
		return false
	}
	var rules []rbacv1.PolicyRule
	if bound(o.ClusterRoleBinding.Subjects) && o.ClusterRoleBinding.RoleRef.Name == o.ClusterRole.Name {
		rules = append(rules, o.ClusterRole.Rules...)
	}
	for i, r := range o.Roles {
		b := o.RoleBindings[i]
		if namespace != "" && r.Namespace == namespace && b.Namespace == namespace && b.RoleRef.Name == r.Name && bound(b.Subjects) {
			rules = append(rules, r.Rules...)
		}
	}
	ask := rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, Verbs: []string{verb}}
	if name != "" {
		ask.ResourceNames = []string{name}
	}
	ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{ask})
	return ok
}

func TestAgentRBAC(t *testing.T) {
	t.Parallel()
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3", UID: types.UID("uid-3")}}
	o := AgentRBAC(c)
	me := "system:karmada:agent:member3"
	const (
		cl   = "cluster.karmada.io"
		work = "work.karmada.io"
		cfg  = "config.karmada.io"
		es3  = "karmada-es-member3"
		es1  = "karmada-es-member1"
	)
	tests := []struct {
		user, namespace, group, resource, name, verb string
		want                                         bool
	}{
		// Its own Cluster, its status and its tunnel.
		{me, "", cl, "clusters", "member3", "get", true},
		{me, "", cl, "clusters", "member3", "list", true}, // with fieldSelector metadata.name=member3
		{me, "", cl, "clusters", "member3", "watch", true},
		{me, "", cl, "clusters", "member3", "update", true},
		{me, "", cl, "clusters", "member3", "patch", true},
		{me, "", cl, "clusters/status", "member3", "patch", true},
		{me, "", cl, "clusters/status", "member3", "update", true},
		{me, "", cl, "clusters/tunnel", "member3", "create", true},
		{me, "", cl, "clusters", "member3", "delete", false},
		{me, "", cl, "clusters", "", "create", false},
		// No other Cluster, and no unselected list.
		{me, "", cl, "clusters", "member1", "get", false},
		{me, "", cl, "clusters", "", "list", false},
		{me, "", cl, "clusters/status", "member1", "patch", false},
		{me, "", cl, "clusters/tunnel", "member1", "create", false},
		{me, "", cl, "clusters/proxy", "member3", "get", false},
		// The interpreter's configuration, read only.
		{me, "", cfg, "resourceinterpretercustomizations", "", "list", true},
		{me, "", cfg, "resourceinterpreterwebhookconfigurations", "", "watch", true},
		{me, "", cfg, "resourceinterpretercustomizations", "x", "update", false},
		// Works and events of its execution namespace only.
		{me, es3, work, "works", "", "list", true},
		{me, es3, work, "works", "w", "update", true},
		{me, es3, work, "works/status", "w", "patch", true},
		{me, es3, work, "works", "w", "delete", false},
		{me, es3, work, "works", "", "create", false},
		{me, es3, "", "events", "", "create", true},
		{me, es1, work, "works", "", "list", false},
		{me, es1, work, "works", "w", "get", false},
		{me, "", work, "works", "", "list", false}, // across namespaces
		{me, es1, "", "events", "", "create", false},
		// Its Lease only, never created by it.
		{me, names.LeaseNamespace, "coordination.k8s.io", "leases", "member3", "update", true},
		{me, names.LeaseNamespace, "coordination.k8s.io", "leases", "member3", "get", true},
		{me, names.LeaseNamespace, "coordination.k8s.io", "leases", "member1", "update", false},
		{me, names.LeaseNamespace, "coordination.k8s.io", "leases", "", "create", false},
		// No secrets anywhere, no bindings, no other group.
		{me, names.LeaseNamespace, "", "secrets", "member3", "get", false},
		{me, es3, "", "secrets", "", "list", false},
		{me, "", "", "secrets", "", "list", false},
		{me, es3, work, "resourcebindings", "", "list", false},
		{me, "", "policy.karmada.io", "propagationpolicies", "", "list", false},
		// Another agent gets nothing from these objects.
		{"system:karmada:agent:member1", "", cl, "clusters", "member3", "get", false},
		{"system:karmada:agent:member1", es3, work, "works", "", "list", false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s %s %s/%s %s/%s", tc.user, tc.verb, tc.group, tc.resource, tc.namespace, tc.name), func(t *testing.T) {
			t.Parallel()
			if got := o.allows(tc.user, tc.namespace, tc.group, tc.resource, tc.name, tc.verb); got != tc.want {
				t.Errorf("allowed = %v, want %v", got, tc.want)
			}
		})
	}

	// Everything goes with the Cluster.
	metas := []metav1.Object{o.ClusterRole, o.ClusterRoleBinding, o.Lease}
	for i := range o.Roles {
		metas = append(metas, o.Roles[i], o.RoleBindings[i])
	}
	for _, m := range metas {
		refs := m.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Kind != "Cluster" || refs[0].Name != "member3" || refs[0].UID != "uid-3" || refs[0].APIVersion != "cluster.karmada.io/v1alpha1" {
			t.Errorf("%s: owner references %+v", m.GetName(), refs)
		}
	}
	if got := []string{o.Roles[0].Namespace, o.Roles[1].Namespace}; got[0] != es3 || got[1] != names.LeaseNamespace {
		t.Errorf("role namespaces %v", got)
	}
	if o.Lease.Namespace != names.LeaseNamespace || o.Lease.Name != "member3" || *o.Lease.Spec.HolderIdentity != "member3" {
		t.Errorf("lease %+v", o.Lease)
	}
}

func TestBootstrapRBAC(t *testing.T) {
	t.Parallel()
	o := BootstrapRBAC()
	roles := map[string][]rbacv1.PolicyRule{
		nodeBootstrapperRole: {{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}}},
	}
	for _, r := range o.ClusterRoles {
		roles[r.Name] = r.Rules
	}
	// groupAllows says whether a group's ClusterRoleBindings allow a request.
	groupAllows := func(group, resource, verb string) bool {
		var rules []rbacv1.PolicyRule
		for _, b := range o.ClusterRoleBindings {
			for _, s := range b.Subjects {
				if s.Kind == rbacv1.GroupKind && s.Name == group {
					rules = append(rules, roles[b.RoleRef.Name]...)
				}
			}
		}
		ok, _ := validation.Covers(rules, []rbacv1.PolicyRule{{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{resource}, Verbs: []string{verb}}})
		return ok
	}
	tests := []struct {
		group, resource, verb string
		want                  bool
	}{
		{names.DefaultTokenGroup, "certificatesigningrequests", "create", true},
		{names.DefaultTokenGroup, "certificatesigningrequests", "watch", true},
		{names.DefaultTokenGroup, "certificatesigningrequests/clusteragent", "create", true},
		{names.DefaultTokenGroup, "certificatesigningrequests/selfclusteragent", "create", false},
		{names.DefaultTokenGroup, "certificatesigningrequests/approval", "update", false},
		{names.DefaultTokenGroup, "certificatesigningrequests", "delete", false},
		{names.AgentsGroup, "certificatesigningrequests", "create", true},
		{names.AgentsGroup, "certificatesigningrequests/selfclusteragent", "create", true},
		{names.AgentsGroup, "certificatesigningrequests/clusteragent", "create", false},
		{names.BootstrappersGroup, "certificatesigningrequests", "create", false},
	}
	for _, tc := range tests {
		if got := groupAllows(tc.group, tc.resource, tc.verb); got != tc.want {
			t.Errorf("%s %s %s: allowed = %v, want %v", tc.group, tc.verb, tc.resource, got, tc.want)
		}
	}
	if len(o.Roles) != 1 || o.Roles[0].Namespace != "kube-public" || o.Roles[0].Rules[0].ResourceNames[0] != "cluster-info" ||
		o.RoleBindings[0].Subjects[0].Name != "system:anonymous" {
		t.Errorf("cluster-info access: %+v %+v", o.Roles, o.RoleBindings)
	}
}
