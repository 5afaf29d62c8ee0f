// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.networking.v1alpha1
// +groupName=networking.karmada.io

// Package v1alpha1 is the v1alpha1 version of the networking.karmada.io API:
// MultiClusterService, which exposes a Service across member clusters, and
// MultiClusterIngress, an Ingress spanning member clusters.
// Wire-compatible with Karmada.
package v1alpha1
