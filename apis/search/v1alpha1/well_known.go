package v1alpha1

const (
	// ResourceRegistryKind is the kind of ResourceRegistry.
	ResourceRegistryKind = "ResourceRegistry"

	// CachedFromClusterAnnotation is set on every object served from the
	// cache to the member cluster it was read from.
	CachedFromClusterAnnotation = "resource.karmada.io/cached-from-cluster"
)
