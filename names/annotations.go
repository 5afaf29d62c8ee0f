package names

// Labels on the objects Flotilla creates for itself, on the control plane
// and in members (Karmada's): the execution namespaces, the RBAC and the
// ServiceAccounts of join and registration.
const (
	// SystemLabel ("true") marks an object Flotilla created for itself.
	SystemLabel = "karmada.io/system"
	// ManagedByLabel names the component that made an object for a
	// member's access (the RBAC of join, of the agent registration).
	ManagedByLabel = "cluster.karmada.io/managed-by"
)

// Annotations of the registration flow: on the CertificateSigningRequests
// of flotillactl register and the agent, on the Clusters registration
// makes, and on the agent's Secret in the member.
const (
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

	// ReregisterAnnotation, set by a control-plane admin on a Cluster to
	// the member's id, allows one more first registration of that name
	// (flotillactl register --force); the registration removes it when it
	// approves.
	ReregisterAnnotation = "cluster.flotilla.io/allow-reregistration"
	// RegisteredByAnnotation on a Cluster the registration created names
	// the bootstrap token user that registered it.
	RegisteredByAnnotation = "cluster.flotilla.io/registered-by"
	// AgentCertificatesAnnotation on a Pull Cluster lists, comma
	// separated, the SHA-256 fingerprints of the last agent certificates
	// issued for it; only those are renewed.
	AgentCertificatesAnnotation = "cluster.flotilla.io/agent-certificates"

	// AgentClusterAnnotation names, on the member's agent Secret, the
	// cluster the agent was registered as (flotillactl register sets it).
	AgentClusterAnnotation = "cluster.karmada.io/name"
)
