package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceRegistry says which kinds of resources to cache from which member
// clusters, for the search/cache and proxying endpoints.
type ResourceRegistry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the clusters and kinds to cache.
	Spec ResourceRegistrySpec `json:"spec,omitempty"`
	// Status is the registry's observed state.
	// +optional
	Status ResourceRegistryStatus `json:"status,omitempty"`
}

// ResourceRegistrySpec is the clusters and kinds to cache.
type ResourceRegistrySpec struct {
	// TargetCluster selects the member clusters to cache from (only Ready ones are cached).
	TargetCluster policyv1alpha1.ClusterAffinity `json:"targetCluster"`
	// ResourceSelectors are the kinds to cache.
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`
	// BackendStore is where to store the cached objects; nil means in memory.
	// +optional
	BackendStore *BackendStoreConfig `json:"backendStore,omitempty"`
}

// ResourceSelector is one kind to cache, optionally in one namespace.
type ResourceSelector struct {
	// APIVersion is the group/version of the kind, e.g. apps/v1.
	APIVersion string `json:"apiVersion"`
	// Kind is the kind.
	Kind string `json:"kind"`
	// Namespace restricts the cache to one namespace; empty means all namespaces.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// BackendStoreConfig is where cached objects are stored.
type BackendStoreConfig struct {
	// OpenSearch stores them in an OpenSearch cluster.
	// +optional
	OpenSearch *OpenSearchConfig `json:"openSearch,omitempty"`
}

// OpenSearchConfig is how to reach an OpenSearch cluster.
type OpenSearchConfig struct {
	// Addresses are the http(s) URLs of the OpenSearch nodes, e.g. https://localhost:9200.
	Addresses []string `json:"addresses"`
	// SecretRef names the Secret holding the credentials (keys userName and password).
	SecretRef clusterv1alpha1.LocalSecretReference `json:"secretRef,omitempty"`
}

// ResourceRegistryStatus is the observed state of a ResourceRegistry.
type ResourceRegistryStatus struct {
	// Conditions are the latest observations of the registry's state.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// ResourceRegistryList is a list of ResourceRegistries.
type ResourceRegistryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the ResourceRegistries.
	Items []ResourceRegistry `json:"items"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Search is the resourceless kind of the search endpoint
// (/apis/search.karmada.io/v1alpha1/search/...); no object of it is stored.
type Search struct {
	metav1.TypeMeta `json:",inline"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// Proxying is the resourceless kind of the global proxy endpoint
// (/apis/search.karmada.io/v1alpha1/proxying/{name}/proxy/...); no object of it is stored.
type Proxying struct {
	metav1.TypeMeta `json:",inline"`
}
