package agentregistration

import (
	"strings"

	"github.com/flotilla-io/flotilla/controllers/internal/names"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "agent-registration"

// Identities of the registration flow. The agent's names are Karmada's
// (karmadactl register, karmada-agent), so certificates and RBAC look the same.
const (
	// UserPrefix starts the user name (certificate CN) of every agent:
	// system:karmada:agent:<cluster>.
	UserPrefix = "system:karmada:agent:"
	// AgentsGroup is the only organization (group) of an agent certificate.
	AgentsGroup = "system:karmada:agents"
	// ClusterIDAnnotation on a CertificateSigningRequest carries the
	// member's cluster id (the uid of its kube-system namespace), which
	// becomes the Cluster's spec.id.
	ClusterIDAnnotation = "cluster.karmada.io/cluster-id"

	// BootstrapUserPrefix starts the user name of a bootstrap token
	// (system:bootstrap:<token id>).
	BootstrapUserPrefix = "system:bootstrap:"
	// BootstrappersGroup is the group of every bootstrap token.
	BootstrappersGroup = "system:bootstrappers"
	// DefaultTokenGroup is the extra group of the tokens `flotillactl token
	// create` makes (karmadactl's default); BootstrapRBAC lets it register.
	DefaultTokenGroup = "system:bootstrappers:karmada:default-cluster-token"

	// LeaseNamespace holds the clusters' heartbeat Leases on the host.
	LeaseNamespace = "karmada-cluster"
	// LeaseDurationSeconds is the duration of the pre-created Lease; the
	// agent sets its own when it renews.
	LeaseDurationSeconds = 40

	// AgentConfigSecret, in the member's agent namespace, holds under
	// AgentConfigKey the kubeconfig of the agent's control-plane identity
	// (Karmada's karmada-agent-config / karmada.config).
	AgentConfigSecret = "karmada-agent-config"
	AgentConfigKey    = "karmada.config"
	// DefaultAgentNamespace is the member namespace of the agent.
	DefaultAgentNamespace = "karmada-system"
	// AgentClusterAnnotation names, on the member's agent Secret, the
	// cluster the agent was registered as (flotillactl register sets it).
	AgentClusterAnnotation = "cluster.karmada.io/name"
)

// Certificate-request subresources the controller checks with a
// SubjectAccessReview, as Karmada's agent CSR approver does: the requester
// of a first certificate must be allowed to create
// certificatesigningrequests/clusteragent, an agent renewing its own
// certificate certificatesigningrequests/selfclusteragent. BootstrapRBAC
// grants them to DefaultTokenGroup and AgentsGroup.
const (
	SubresourceClusterAgent     = "clusteragent"
	SubresourceSelfClusterAgent = "selfclusteragent"
)

// UserName is the user (certificate CN) of the agent of cluster.
func UserName(cluster string) string { return UserPrefix + cluster }

// ClusterOfUser returns the cluster of an agent user name.
func ClusterOfUser(user string) (string, bool) {
	c, ok := strings.CutPrefix(user, UserPrefix)
	return c, ok && c != ""
}

// ClusterRoleName names the ClusterRole and ClusterRoleBinding of the
// agent of cluster on the control plane.
func ClusterRoleName(cluster string) string { return "system:karmada:" + cluster + ":agent" }

// WorkRoleName names the Role and RoleBinding of the agent in its
// execution namespace.
func WorkRoleName(cluster string) string { return "system:karmada:" + cluster + ":agent-work" }

// LeaseRoleName names the Role and RoleBinding of the agent in LeaseNamespace.
func LeaseRoleName(cluster string) string { return "system:karmada:" + cluster + ":agent-lease" }

// ExecutionNamespace is the namespace of the cluster's Works.
func ExecutionNamespace(cluster string) string { return names.ExecutionNamespace(cluster) }
