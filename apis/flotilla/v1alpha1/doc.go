// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.flotilla.v1alpha1
// +groupName=flotilla.io

// Package v1alpha1 is the v1alpha1 version of the flotilla.io API,
// Flotilla's own group (not Karmada's): RolloutStrategy, the stages of a
// staged, health-gated rollout across member clusters.
package v1alpha1
