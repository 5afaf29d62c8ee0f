// Package install registers the policy.karmada.io API in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// Install registers v1alpha1 and, as the group serves one version, the same
// Go types as its internal version (no conversion needed).
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	internal := policyv1alpha1.SchemeGroupVersion
	internal.Version = runtime.APIVersionInternal
	scheme.AddKnownTypes(internal,
		&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.PropagationPolicyList{},
		&policyv1alpha1.ClusterPropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicyList{},
		&policyv1alpha1.OverridePolicy{}, &policyv1alpha1.OverridePolicyList{},
		&policyv1alpha1.ClusterOverridePolicy{}, &policyv1alpha1.ClusterOverridePolicyList{},
		&policyv1alpha1.FederatedResourceQuota{}, &policyv1alpha1.FederatedResourceQuotaList{},
		&policyv1alpha1.ClusterTaintPolicy{}, &policyv1alpha1.ClusterTaintPolicyList{},
	)
	utilruntime.Must(scheme.SetVersionPriority(policyv1alpha1.SchemeGroupVersion))
}
