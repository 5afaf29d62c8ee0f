// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +groupName=cluster.karmada.io

// Package v1alpha1 is the v1alpha1 version of the cluster.karmada.io API:
// the member clusters Flotilla manages, wire-compatible with Karmada.
package v1alpha1
