package names

const (
	// SecretTokenKey and SecretCABundleKey are the keys of a Cluster's
	// secretRef Secret (Karmada's): the bearer token of the control plane's
	// identity in the member and the member API server's PEM CA bundle. An
	// impersonatorSecretRef Secret holds its token under SecretTokenKey too.
	SecretTokenKey    = "token"
	SecretCABundleKey = "caBundle"

	// AgentConfigSecret, in the member's agent namespace (SystemNamespace by
	// default), holds under AgentConfigKey the kubeconfig of the agent's
	// control-plane identity (Karmada's karmada-agent-config /
	// karmada.config).
	AgentConfigSecret = "karmada-agent-config"
	AgentConfigKey    = "karmada.config"
)
