package agentregistration

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/names"
)

// ControllerName is the name of this controller in --controllers.
const ControllerName = "agent-registration"

// Identities of the registration flow. The agent's names are Karmada's
// (karmadactl register, karmada-agent), so certificates and RBAC look the same.
const (
	// UserPrefix starts the user name (certificate CN) of every agent:
	// system:karmada:agent:<cluster>.
	UserPrefix = clusterv1alpha1.AgentUserPrefix
	// AgentsGroup is the only organization (group) of an agent certificate.
	AgentsGroup = clusterv1alpha1.AgentsGroup
	// ClusterIDAnnotation on a CertificateSigningRequest carries the
	// member's cluster id (the uid of its kube-system namespace), which
	// becomes the Cluster's spec.id.
	ClusterIDAnnotation = "cluster.karmada.io/cluster-id"
	// ClusterProviderAnnotation, ClusterRegionAnnotation and
	// ClusterZonesAnnotation (comma separated) on a first registration's
	// CertificateSigningRequest become the new Cluster's spec.provider,
	// spec.region and spec.zones (flotillactl register --cluster-provider,
	// --cluster-region, --cluster-zones, as karmadactl's agent sets them).
	// A registered Cluster's spec is the control plane's to change.
	ClusterProviderAnnotation = "cluster.flotilla.io/provider"
	ClusterRegionAnnotation   = "cluster.flotilla.io/region"
	ClusterZonesAnnotation    = "cluster.flotilla.io/zones"

	// BoundTokenGroupPrefix starts the extra group of a bootstrap token
	// bound to one cluster name (flotillactl token create --cluster-name):
	// system:bootstrappers:karmada:cluster:<name>. The token's groups reach
	// the request as the host authenticated them, so they cannot be forged.
	BoundTokenGroupPrefix = "system:bootstrappers:karmada:cluster:"
	// ReregisterAnnotation, set by a control-plane admin on a Cluster to
	// the member's id, allows one more first registration of that name
	// (flotillactl register --force); the controller removes it when it
	// approves.
	ReregisterAnnotation = "cluster.flotilla.io/allow-reregistration"
	// RegisteredByAnnotation on a Cluster the registration created names
	// the bootstrap token user that registered it.
	RegisteredByAnnotation = "cluster.flotilla.io/registered-by"
	// AgentCertificatesAnnotation on a Pull Cluster lists, comma
	// separated, the SHA-256 fingerprints of the last agent certificates
	// issued for it; only those are renewed.
	AgentCertificatesAnnotation = "cluster.flotilla.io/agent-certificates"
	// CredentialIDExtra is the user extra in which the host names the
	// client certificate a request was made with ("X509SHA256=<hex>").
	CredentialIDExtra = user.CredentialIDKey

	// BootstrapUserPrefix starts the user name of a bootstrap token
	// (system:bootstrap:<token id>).
	BootstrapUserPrefix = "system:bootstrap:"
	// BootstrappersGroup is the group of every bootstrap token.
	BootstrappersGroup = "system:bootstrappers"
	// DefaultTokenGroup is the extra group of the tokens `flotillactl token
	// create` makes (karmadactl's default); BootstrapRBAC lets it register.
	DefaultTokenGroup = "system:bootstrappers:karmada:default-cluster-token"

	// LeaseDurationSeconds is the duration of the pre-created Lease; the
	// agent sets its own when it renews.
	LeaseDurationSeconds = 40

	// AgentConfigSecret, in the member's agent namespace, holds under
	// AgentConfigKey the kubeconfig of the agent's control-plane identity
	// (Karmada's karmada-agent-config / karmada.config).
	AgentConfigSecret = "karmada-agent-config"
	AgentConfigKey    = "karmada.config"
	// DefaultAgentNamespace is the member namespace of the agent.
	DefaultAgentNamespace = clusterv1alpha1.SystemNamespace
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

// BoundTokenGroup is the extra group of a bootstrap token that may
// register only cluster.
func BoundTokenGroup(cluster string) string { return BoundTokenGroupPrefix + cluster }

// maxIssuedCertificates is how many fingerprints a Cluster remembers: the
// current certificate and a few renewals that may not have reached the
// agent yet.
const maxIssuedCertificates = 4

// credentialPrefix starts the host's credential id of a client certificate.
const credentialPrefix = "X509SHA256="

// credential returns the certificate fingerprint of a credential id extra.
func credential(ids []string) string {
	for _, id := range ids {
		if fp, ok := strings.CutPrefix(id, credentialPrefix); ok {
			return strings.ToLower(fp)
		}
	}
	return ""
}

// fingerprint is the hex SHA-256 of a certificate's DER, as the host's
// credential id gives it.
func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// IssuedCertificates returns the fingerprints of the agent certificates
// issued for c.
func IssuedCertificates(c *clusterv1alpha1.Cluster) []string {
	v := c.Annotations[AgentCertificatesAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
