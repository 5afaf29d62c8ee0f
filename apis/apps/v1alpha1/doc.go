// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.apps.v1alpha1
// +groupName=apps.karmada.io

// Package v1alpha1 is the v1alpha1 version of the apps.karmada.io API:
// WorkloadRebalancer, a one-shot request to reschedule workloads from
// scratch. Wire-compatible with Karmada.
package v1alpha1
