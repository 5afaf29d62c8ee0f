// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.work.v1alpha2
// +k8s:defaulter-gen=TypeMeta
// +groupName=work.karmada.io

// Package v1alpha2 is the v1alpha2 version of the work.karmada.io API:
// ResourceBinding and ClusterResourceBinding, the scheduling unit that ties a
// resource template to the placement of the policy claiming it and records
// the scheduler's result. It is the storage version of both kinds and the hub
// every other served version (v1alpha1) converts through. Works live in
// v1alpha1; this package does not serve them.
package v1alpha2
