package names

// The names Karmada gives to the objects it makes (bindings, Works,
// execution namespaces, derived Services), so Flotilla's are identical.

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// BindingName is the name of the (Cluster)ResourceBinding of a template:
// lower(name with ':' replaced by '.' + "-" + kind).
func BindingName(kind, name string) string {
	return strings.ToLower(strings.ReplaceAll(name, ":", ".") + "-" + kind)
}

// safeEncodeAlphabet is the alphabet Kubernetes' rand.SafeEncodeString maps
// characters onto (no vowels, no confusable characters).
const safeEncodeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// WorkName is the name of the Work of a template in an execution namespace:
// the lowered name, a dash, and the safe-encoded decimal FNV-1a hash of
// "<namespace>-<name>-<kind>" (or "<name>-<kind>" when cluster-scoped).
func WorkName(kind, name, namespace string) string {
	n := strings.ToLower(strings.ReplaceAll(name, ":", "."))
	key := n + "-" + kind
	if namespace != "" {
		key = namespace + "-" + key
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(key)))
	digits := strconv.FormatUint(uint64(h.Sum32()), 10)
	encoded := make([]byte, len(digits))
	for i := range len(digits) {
		encoded[i] = safeEncodeAlphabet[int(digits[i])%len(safeEncodeAlphabet)]
	}
	return n + "-" + string(encoded)
}

// BindingKey is the work-queue key of a binding: "rb/<namespace>/<name>"
// for a ResourceBinding, "crb/<name>" for a ClusterResourceBinding (empty
// namespace). The binding, binding-status and scheduler controllers share
// it.
func BindingKey(namespace, name string) string {
	if namespace == "" {
		return "crb/" + name
	}
	return "rb/" + namespace + "/" + name
}

// ParseBindingKey splits a BindingKey; cluster is true for a
// ClusterResourceBinding, ok false for a malformed key.
func ParseBindingKey(key string) (namespace, name string, cluster, ok bool) {
	if name, found := strings.CutPrefix(key, "crb/"); found && name != "" {
		return "", name, true, true
	}
	if rest, found := strings.CutPrefix(key, "rb/"); found {
		namespace, name, ok = strings.Cut(rest, "/")
		return namespace, name, false, ok && namespace != "" && name != ""
	}
	return "", "", false, false
}

// DerivedServiceName is the Service a member importing service (a
// ServiceImport of that name) gets: "derived-<service>", Karmada's name.
func DerivedServiceName(service string) string { return "derived-" + service }

// ImportedEndpointSliceName is the name an EndpointSlice collected from
// cluster has in the members importing its service:
// "imported-<cluster>-<slice>", Karmada's name.
func ImportedEndpointSliceName(cluster, slice string) string {
	return "imported-" + cluster + "-" + slice
}
