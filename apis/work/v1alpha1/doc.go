// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.work.v1alpha1
// +groupName=work.karmada.io

// Package v1alpha1 is the v1alpha1 version of the work.karmada.io API: Work,
// the set of manifests to apply to one member cluster, and the old v1alpha1
// schema of ResourceBinding and ClusterResourceBinding, which is still served
// and converted to and from the v1alpha2 hub (conversion.go). The current
// binding schema lives in package v1alpha2.
package v1alpha1
