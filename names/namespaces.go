package names

import "strings"

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

	// SystemNamespace holds the control plane's own objects (its Services
	// and leader Leases) and, in a member, the agent and its Secrets
	// (Karmada's karmada-system).
	SystemNamespace = "karmada-system"

	// InventoryNamespace is where Flotilla publishes the ClusterProfiles of
	// its clusters (the Cluster Inventory API) by default.
	InventoryNamespace = "flotilla-inventory"

	// ExecutionNamespacePrefix + cluster name is the namespace of a
	// cluster's Works, karmada-es-<cluster> (Karmada's execution space).
	ExecutionNamespacePrefix = "karmada-es-"
)

// ExecutionNamespace returns the namespace holding a cluster's Works.
func ExecutionNamespace(cluster string) string { return ExecutionNamespacePrefix + cluster }

// ClusterOf returns the cluster whose Works namespace holds; ok is false
// for a namespace that is not an execution namespace.
func ClusterOf(namespace string) (cluster string, ok bool) {
	return strings.CutPrefix(namespace, ExecutionNamespacePrefix)
}

// ReservedNamespace tells whether templates in ns are never propagated (as
// in Karmada): Karmada's own namespaces and the skipped kube-* ones.
func ReservedNamespace(ns string) bool {
	return ns == SystemNamespace || ns == SecretNamespace || strings.HasPrefix(ns, ExecutionNamespacePrefix) ||
		strings.HasPrefix(ns, "kube-")
}
