package v1alpha1

// Names every component shares about clusters; each is declared here once.
const (
	// SecretNamespace is the only namespace of the control plane whose
	// Secrets a Cluster's secretRef and impersonatorSecretRef may name
	// (karmadactl join's default --cluster-namespace). The control plane
	// reads member credentials nowhere else, so a Cluster cannot point it
	// at another tenant's Secrets.
	SecretNamespace = "karmada-cluster"
	// LeaseNamespace holds one heartbeat Lease per cluster, named after
	// it, renewed by whoever reports the cluster's status (Karmada's
	// karmada-cluster namespace, which also holds the Secrets).
	LeaseNamespace = SecretNamespace

	// SystemNamespace holds the control plane's own objects: its Services,
	// leader Leases and the agents' Secrets in members (Karmada's
	// karmada-system).
	SystemNamespace = "karmada-system"

	// AgentUserPrefix starts the user name (certificate CN) of the agent of
	// a Pull cluster: system:karmada:agent:<cluster> (Karmada's).
	AgentUserPrefix = "system:karmada:agent:"
	// AgentsGroup is the group of every agent identity.
	AgentsGroup = "system:karmada:agents"
)

// ProxySubresource is the subresource of a Cluster that reaches the
// member's API as the caller (clusters/{name}/proxy/...).
const ProxySubresource = "proxy"

// ProxyPath is the path, on the control plane, under which cluster's own
// API is served as the caller: a client whose host ends with it talks to
// the member.
func ProxyPath(cluster string) string {
	return "/apis/" + SchemeGroupVersion.String() + "/clusters/" + cluster + "/" + ProxySubresource
}
