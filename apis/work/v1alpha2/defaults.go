package v1alpha2

import policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"

// The SetDefaults_<Type> functions below are Karmada's CRD schema defaults
// for bindings; defaulter-gen calls them, and those of the policy types a
// binding embeds (placement, failover), from zz_generated.defaults.go.

// SetDefaults_ResourceBindingSpec defaults conflictResolution to Abort.
func SetDefaults_ResourceBindingSpec(s *ResourceBindingSpec) {
	if s.ConflictResolution == "" {
		s.ConflictResolution = policyv1alpha1.ConflictAbort
	}
}
