// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.cluster.v1alpha1
// +groupName=cluster.karmada.io

// Package v1alpha1 is the v1alpha1 version of the cluster.karmada.io API:
// the member clusters Flotilla manages, wire-compatible with Karmada.
package v1alpha1
