package names

import "strings"

// Identities of agents and of the registration flow. The agent's names are
// Karmada's (karmadactl register, karmada-agent), so certificates and RBAC
// look the same.
const (
	// AgentUserPrefix starts the user name (certificate CN) of the agent of
	// a Pull cluster: system:karmada:agent:<cluster>.
	AgentUserPrefix = "system:karmada:agent:"
	// AgentsGroup is the group of every agent identity, the only
	// organization of an agent certificate.
	AgentsGroup = "system:karmada:agents"

	// BootstrapUserPrefix starts the user name of a bootstrap token
	// (system:bootstrap:<token id>).
	BootstrapUserPrefix = "system:bootstrap:"
	// BootstrappersGroup is the group of every bootstrap token.
	BootstrappersGroup = "system:bootstrappers"
	// DefaultTokenGroup is the extra group of the tokens `flotillactl token
	// create` makes (karmadactl's default); the bootstrap RBAC lets it
	// register.
	DefaultTokenGroup = "system:bootstrappers:karmada:default-cluster-token"
	// BoundTokenGroupPrefix starts the extra group of a bootstrap token
	// bound to one cluster name (flotillactl token create --cluster-name):
	// system:bootstrappers:karmada:cluster:<name>. The token's groups reach
	// the request as the host authenticated them, so they cannot be forged.
	BoundTokenGroupPrefix = "system:bootstrappers:karmada:cluster:"

	// ClusterInfoNamespace and ClusterInfoName locate the host's
	// cluster-info ConfigMap: the control plane's CA and endpoint, signed
	// with each bootstrap token (kubeadm's kube-public/cluster-info).
	ClusterInfoNamespace = "kube-public"
	ClusterInfoName      = "cluster-info"

	// SubresourceClusterAgent and SubresourceSelfClusterAgent are the
	// certificate-request subresources the registration checks with a
	// SubjectAccessReview, as Karmada's agent CSR approver does: the
	// requester of a first certificate must be allowed to create
	// certificatesigningrequests/clusteragent, an agent renewing its own
	// certificate certificatesigningrequests/selfclusteragent. The
	// bootstrap RBAC grants them to DefaultTokenGroup and AgentsGroup.
	SubresourceClusterAgent     = "clusteragent"
	SubresourceSelfClusterAgent = "selfclusteragent"
)

// AgentUserName is the user (certificate CN) of the agent of cluster.
func AgentUserName(cluster string) string { return AgentUserPrefix + cluster }

// ClusterOfAgentUser returns the cluster of an agent user name.
func ClusterOfAgentUser(user string) (string, bool) {
	c, ok := strings.CutPrefix(user, AgentUserPrefix)
	return c, ok && c != ""
}

// AgentClusterRoleName names the ClusterRole and ClusterRoleBinding of the
// agent of cluster on the control plane.
func AgentClusterRoleName(cluster string) string { return "system:karmada:" + cluster + ":agent" }

// AgentWorkRoleName names the Role and RoleBinding of the agent in its
// execution namespace.
func AgentWorkRoleName(cluster string) string {
	return "system:karmada:" + cluster + ":agent-work"
}

// AgentLeaseRoleName names the Role and RoleBinding of the agent in
// LeaseNamespace.
func AgentLeaseRoleName(cluster string) string {
	return "system:karmada:" + cluster + ":agent-lease"
}

// BoundTokenGroup is the extra group of a bootstrap token that may
// register only cluster.
func BoundTokenGroup(cluster string) string { return BoundTokenGroupPrefix + cluster }
