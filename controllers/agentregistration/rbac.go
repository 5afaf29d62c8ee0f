package agentregistration

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// Verbs of the agent's rules.
var (
	readVerbs       = []string{"get", "list", "watch"}
	readWriteVerbs  = []string{"get", "list", "watch", "update", "patch"}
	statusVerbs     = []string{"get", "update", "patch"}
	eventVerbs      = []string{"create", "patch", "update"}
	leaseVerbs      = []string{"get", "update", "patch"}
	tunnelVerbs     = []string{"get", "create"}
	clusterInfoVerb = []string{"get"}
)

// AgentRBACObjects are the control-plane objects that give the agent of
// one cluster its rights.
type AgentRBACObjects struct {
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	// Roles and RoleBindings: its execution namespace, then LeaseNamespace.
	Roles        []*rbacv1.Role
	RoleBindings []*rbacv1.RoleBinding
	// Lease is the cluster's heartbeat Lease, created before the agent
	// runs: RBAC cannot restrict create by name, so the agent may only
	// get and renew this one Lease.
	Lease *coordinationv1.Lease
}

// AgentRBAC returns the least-privilege rights of the agent of cluster,
// owned by the Cluster so they go with it. flotilla-apiserver delegates
// authorization to the host, so host RBAC decides on its APIs too. The
// agent may:
//   - get, list, watch, update and patch its own Cluster, and get, update
//     and patch its status; list and watch are allowed by resourceNames
//     only when the request selects the name (fieldSelector
//     metadata.name=<cluster>), so the agent's Cluster informer must;
//   - get and create its own clusters/<cluster>/tunnel;
//   - read ResourceInterpreterCustomizations and
//     ResourceInterpreterWebhookConfigurations (its interpreter needs them);
//   - get, list, watch, update and patch the Works of its execution
//     namespace and their status (removing the execution finalizer is an
//     update), and record events there;
//   - get, update and patch its own Lease in LeaseNamespace.
//
// Nothing else: no Secrets, no other Cluster, no other namespace, no create
// or delete of Clusters or Works.
func AgentRBAC(cluster *clusterv1alpha1.Cluster) AgentRBACObjects {
	name := cluster.Name
	user := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: names.AgentUserName(name)}}
	meta := func(objName, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: objName, Namespace: namespace, Labels: ownLabels(), OwnerReferences: []metav1.OwnerReference{ownerRef(cluster)}}
	}
	clusterGroup := clusterv1alpha1.GroupName
	o := AgentRBACObjects{
		ClusterRole: &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: meta(names.AgentClusterRoleName(name), ""),
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{clusterGroup}, Resources: []string{"clusters"}, ResourceNames: []string{name}, Verbs: readWriteVerbs},
				{APIGroups: []string{clusterGroup}, Resources: []string{"clusters/status"}, ResourceNames: []string{name}, Verbs: statusVerbs},
				{APIGroups: []string{clusterGroup}, Resources: []string{"clusters/tunnel"}, ResourceNames: []string{name}, Verbs: tunnelVerbs},
				{APIGroups: []string{"config.karmada.io"}, Resources: []string{"resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations"}, Verbs: readVerbs},
			},
		},
		ClusterRoleBinding: &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: meta(names.AgentClusterRoleName(name), ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: names.AgentClusterRoleName(name)},
			Subjects:   user,
		},
		Lease: &coordinationv1.Lease{
			TypeMeta:   metav1.TypeMeta{APIVersion: coordinationv1.SchemeGroupVersion.String(), Kind: "Lease"},
			ObjectMeta: meta(name, names.LeaseNamespace),
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](LeaseDurationSeconds)},
		},
	}
	roles := []struct {
		name, namespace string
		rules           []rbacv1.PolicyRule
	}{
		{names.AgentWorkRoleName(name), names.ExecutionNamespace(name), []rbacv1.PolicyRule{
			{APIGroups: []string{"work.karmada.io"}, Resources: []string{"works"}, Verbs: readWriteVerbs},
			{APIGroups: []string{"work.karmada.io"}, Resources: []string{"works/status"}, Verbs: statusVerbs},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: eventVerbs},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: eventVerbs},
		}},
		{names.AgentLeaseRoleName(name), names.LeaseNamespace, []rbacv1.PolicyRule{
			{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{name}, Verbs: leaseVerbs},
		}},
	}
	for _, r := range roles {
		o.Roles = append(o.Roles, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: meta(r.name, r.namespace),
			Rules:      r.rules,
		})
		o.RoleBindings = append(o.RoleBindings, &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta(r.name, r.namespace),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.name},
			Subjects:   user,
		})
	}
	return o
}

// ownerRef makes the Cluster the owner, so deleting it collects the object.
// It does not block the Cluster's deletion.
func ownerRef(c *clusterv1alpha1.Cluster) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1alpha1.SchemeGroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false),
	}
}

func ownLabels() map[string]string {
	return map[string]string{names.SystemLabel: "true", names.ManagedByLabel: names.AgentRegistrationController}
}

// Names of the host RBAC objects of the bootstrap flow.
const (
	// bootstrapBindingName lets names.DefaultTokenGroup create and watch
	// certificate requests (the built-in system:node-bootstrapper rights).
	bootstrapBindingName = "system:karmada:agent-bootstrap"
	// renewalBindingName lets agents request their next certificate.
	renewalBindingName = "system:karmada:agent-certificate-renewal"
	// AutoApproverRole and SelfAutoApproverRole are Karmada's: who holds
	// them gets agent certificates approved.
	AutoApproverRole     = "system:karmada:certificatesigningrequest:autoapprover"
	SelfAutoApproverRole = "system:karmada:certificatesigningrequest:selfautoapprover"
	// clusterInfoRole lets anyone read kube-public/cluster-info, the
	// control plane's CA and endpoint signed with each bootstrap token
	// (kubeadm's bootstrap-signer-clusterinfo).
	clusterInfoRole = "system:karmada:bootstrap-signer-clusterinfo"
	// nodeBootstrapperRole is built into kube-apiserver: create, get, list
	// and watch certificatesigningrequests.
	nodeBootstrapperRole = "system:node-bootstrapper"
)

// HostRBAC are the host objects of the bootstrap flow.
type HostRBAC struct {
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
	Roles               []*rbacv1.Role
	RoleBindings        []*rbacv1.RoleBinding
}

// BootstrapRBAC returns the host RBAC the registration flow needs, which
// flotilla-apiserver applies to the host with its other host objects:
//   - tokens of names.DefaultTokenGroup may create, get, list and watch
//     CertificateSigningRequests (system:node-bootstrapper) and get them
//     auto-approved (certificatesigningrequests/clusteragent);
//   - agents (names.AgentsGroup) may request their next certificate the same way
//     (certificatesigningrequests/selfclusteragent);
//   - anyone, unauthenticated included, may read kube-public/cluster-info,
//     as on a kubeadm cluster: register reads the CA there before it trusts
//     the server with its token (the CA is checked against the hash given on
//     the command line, the content against the token's signature).
func BootstrapRBAC() HostRBAC {
	group := func(g string) []rbacv1.Subject {
		return []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: g}}
	}
	meta := func(name, namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: ownLabels()}
	}
	crb := func(name, role string, subjects []rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
			ObjectMeta: meta(name, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   subjects,
		}
	}
	approver := func(name, subresource string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
			ObjectMeta: meta(name, ""),
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{certificatesv1.GroupName},
				Resources: []string{"certificatesigningrequests/" + subresource}, Verbs: []string{"create"}}},
		}
	}
	return HostRBAC{
		ClusterRoles: []*rbacv1.ClusterRole{
			approver(AutoApproverRole, names.SubresourceClusterAgent),
			approver(SelfAutoApproverRole, names.SubresourceSelfClusterAgent),
		},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			crb(bootstrapBindingName, nodeBootstrapperRole, group(names.DefaultTokenGroup)),
			crb(AutoApproverRole, AutoApproverRole, group(names.DefaultTokenGroup)),
			crb(renewalBindingName, nodeBootstrapperRole, group(names.AgentsGroup)),
			crb(SelfAutoApproverRole, SelfAutoApproverRole, group(names.AgentsGroup)),
		},
		Roles: []*rbacv1.Role{{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
			ObjectMeta: meta(clusterInfoRole, names.ClusterInfoNamespace),
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"},
				ResourceNames: []string{names.ClusterInfoName}, Verbs: clusterInfoVerb}},
		}},
		RoleBindings: []*rbacv1.RoleBinding{{
			TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
			ObjectMeta: meta(clusterInfoRole, names.ClusterInfoNamespace),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: clusterInfoRole},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "system:anonymous"}},
		}},
	}
}
