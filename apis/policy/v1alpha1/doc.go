// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.flotilla-io.flotilla.apis.policy.v1alpha1
// +k8s:defaulter-gen=TypeMeta
// +groupName=policy.karmada.io

// Package v1alpha1 is the v1alpha1 version of the policy.karmada.io API,
// wire-compatible with Karmada: the policies that say where resource
// templates are propagated (PropagationPolicy, ClusterPropagationPolicy), how
// they are changed per cluster (OverridePolicy, ClusterOverridePolicy), how
// much they may use (FederatedResourceQuota) and when clusters are tainted
// (ClusterTaintPolicy). Admission behaviour lives in the sibling packages
// mutation and validation, not here.
package v1alpha1
