// +k8s:deepcopy-gen=package
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.autoscaling.v1alpha1
// +groupName=autoscaling.karmada.io

// Package v1alpha1 is the v1alpha1 version of the autoscaling.karmada.io API:
// FederatedHPA, a horizontal pod autoscaler over the metrics of every member
// cluster, and CronFederatedHPA, scheduled scaling of a workload or of a
// FederatedHPA's bounds. Wire-compatible with Karmada.
package v1alpha1
