// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.remedy.v1alpha1
// +groupName=remedy.karmada.io

// Package v1alpha1 is the v1alpha1 version of the remedy.karmada.io API:
// Remedy, which turns cluster conditions into remedy actions listed in the
// clusters' status.remedyActions. Wire-compatible with Karmada.
package v1alpha1
