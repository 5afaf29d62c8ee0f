package member

// Names the control plane, its agents and members share; each is declared
// once, here or (for names the API types carry) in
// apis/cluster/v1alpha1/wellknown.go.
const (
	// SecretTokenKey and SecretCABundleKey are the keys of a Cluster's
	// secretRef Secret (Karmada's): the bearer token of the control plane's
	// identity in the member and the member API server's PEM CA bundle. An
	// impersonatorSecretRef Secret holds its token under SecretTokenKey too.
	SecretTokenKey    = "token"
	SecretCABundleKey = "caBundle"
)

// TunnelHost is the placeholder host of requests sent to a Pull cluster
// through its agent's tunnel: the tunnel's streams reach the agent whatever
// the host, and the agent sends them on to its member.
func TunnelHost(cluster string) string { return cluster + ".tunnel" }
