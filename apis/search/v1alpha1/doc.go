// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.search.v1alpha1
// +groupName=search.karmada.io

// Package v1alpha1 is the v1alpha1 version of the search.karmada.io API,
// served by Flotilla's search apiserver: ResourceRegistry, which says what to
// cache from which member clusters, and the resourceless kinds Search and
// Proxying behind the search/ and proxying/ connect endpoints.
// Wire-compatible with Karmada.
package v1alpha1
