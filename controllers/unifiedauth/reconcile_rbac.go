package unifiedauth

import (
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// rbacReconciler derives a member's impersonation RBAC from host RBAC.
type rbacReconciler struct {
	// listBindings lists the host's ClusterRoleBindings; getRole gets a
	// host ClusterRole.
	listBindings func() ([]*rbacv1.ClusterRoleBinding, error)
	getRole      func(name string) (*rbacv1.ClusterRole, error)
}

// memberObject is one object shipped to the member, with its kind.
type memberObject struct {
	kind string
	obj  any
}

// reconcile returns the ClusterRole and then the ClusterRoleBinding, both
// called ImpersonatorName, that let the cluster's impersonator service
// account impersonate exactly who may proxy to the cluster.
func (r *rbacReconciler) reconcile(cluster *clusterv1alpha1.Cluster) ([]memberObject, error) {
	rules, err := r.impersonationRules(cluster.Name)
	if err != nil {
		return nil, err
	}
	managed := map[string]string{workv1alpha1.ManagedByKarmadaLabel: workv1alpha1.ManagedByKarmadaLabelValue}
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName, Labels: managed},
		Rules:      rules,
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: ImpersonatorName, Labels: managed},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ImpersonatorName},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ImpersonatorName,
			Namespace: cluster.Spec.ImpersonatorSecretRef.Namespace}},
	}
	return []memberObject{{kind: "ClusterRole", obj: role}, {kind: "ClusterRoleBinding", obj: binding}}, nil
}

// impersonationRules computes the member rules: impersonate exactly the
// users, service accounts and groups that host RBAC allows to proxy to the
// cluster, plus the UIDs and extras the proxy forwards for them.
func (r *rbacReconciler) impersonationRules(cluster string) ([]rbacv1.PolicyRule, error) {
	bindings, err := r.listBindings()
	if err != nil {
		return nil, err
	}
	users, groups, sas := sets.New[string](), sets.New[string](), sets.New[string]()
	// A group may proxy: its members cannot be listed, so any user may be
	// impersonated, but only with the groups granted below.
	anyUser := false
	for _, b := range bindings {
		if b.RoleRef.Kind != "ClusterRole" {
			continue
		}
		role, err := r.getRole(b.RoleRef.Name)
		if err != nil || !grantsProxy(role.Rules, cluster) {
			continue
		}
		for _, s := range b.Subjects {
			switch s.Kind {
			case rbacv1.UserKind:
				users.Insert(s.Name)
			case rbacv1.GroupKind:
				groups.Insert(s.Name)
				anyUser = true
			case rbacv1.ServiceAccountKind:
				sas.Insert(s.Name)
				users.Insert("system:serviceaccount:" + s.Namespace + ":" + s.Name)
				// The proxy forwards a service account's groups too.
				groups.Insert("system:serviceaccounts", "system:serviceaccounts:"+s.Namespace)
			}
		}
	}
	var rules []rbacv1.PolicyRule
	add := func(group, resource string, names sets.Set[string]) {
		if names.Len() > 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, ResourceNames: sorted(names), Verbs: []string{"impersonate"}})
		}
	}
	if anyUser {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}})
	} else {
		add("", "users", users)
	}
	add("", "serviceaccounts", sas)
	add("", "groups", groups)
	if users.Len() > 0 || anyUser {
		// The proxy forwards the caller's UID and extras (a service account's
		// credential id, OIDC claims). RBAC cannot wildcard the extra keys
		// (userextras/<key>), so every resource of authentication.k8s.io is
		// granted, with only the impersonate verb: the user and groups above
		// still bound who can be impersonated.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"*"}, Verbs: []string{"impersonate"}})
	}
	return rules, nil
}

// grantsProxy reports whether rules allow clusters/proxy on cluster (or the
// search proxying/proxy, which reaches every cluster).
func grantsProxy(rules []rbacv1.PolicyRule, cluster string) bool {
	for _, r := range rules {
		if len(r.Verbs) == 0 {
			continue
		}
		match := func(group string, resources ...string) bool {
			if !slices.Contains(r.APIGroups, group) && !slices.Contains(r.APIGroups, "*") {
				return false
			}
			for _, res := range resources {
				if slices.Contains(r.Resources, res) {
					return true
				}
			}
			return slices.Contains(r.Resources, "*")
		}
		if match("cluster.karmada.io", "clusters/proxy", "clusters/*") && (len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, cluster)) {
			return true
		}
		if match("search.karmada.io", "proxying/proxy", "proxying/*") {
			return true
		}
	}
	return false
}

func sorted(s sets.Set[string]) []string {
	l := s.UnsortedList()
	sort.Strings(l)
	return l
}
