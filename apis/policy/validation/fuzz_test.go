package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// FuzzPropagationPolicy: ValidatePropagationPolicy never panics and judges what is stored.
func FuzzPropagationPolicy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[policyv1alpha1.PropagationPolicy]{Create: ValidatePropagationPolicy, Update: ValidatePropagationPolicyUpdate, Seeds: []string{
		`{"metadata":{"name":"p","namespace":"default"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}],"placement":{"clusterAffinity":{"clusterNames":["member1","member2"]},"replicaScheduling":{"replicaSchedulingType":"Divided","replicaDivisionPreference":"Weighted","weightPreference":{"staticWeightList":[{"targetCluster":{"clusterNames":["member1"]},"weight":1}]}},"spreadConstraints":[{"spreadByField":"cluster","maxGroups":2,"minGroups":1}]},"propagateDeps":true,"failover":{"application":{"decisionConditions":{"tolerationSeconds":30},"purgeMode":"Gracefully"}}}}`,
	}})
}

// FuzzClusterPropagationPolicy: ValidateClusterPropagationPolicy never panics and judges what is stored.
func FuzzClusterPropagationPolicy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[policyv1alpha1.ClusterPropagationPolicy]{Create: ValidateClusterPropagationPolicy, Update: ValidateClusterPropagationPolicyUpdate, Seeds: []string{
		`{"metadata":{"name":"p"},"spec":{"resourceSelectors":[{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","labelSelector":{"matchLabels":{"a":"b"}}}],"placement":{"clusterAffinities":[{"affinityName":"a","clusterNames":["member1"]}]}}}`,
	}})
}

// FuzzOverridePolicy: ValidateOverridePolicy never panics and judges what is stored.
func FuzzOverridePolicy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[policyv1alpha1.OverridePolicy]{Create: ValidateOverridePolicy, Update: ValidateOverridePolicyUpdate, Seeds: []string{
		`{"metadata":{"name":"o","namespace":"default"},"spec":{"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}],"overrideRules":[{"targetCluster":{"clusterNames":["member1"]},"overriders":{"plaintext":[{"path":"/spec/replicas","operator":"replace","value":3}],"imageOverrider":[{"component":"Registry","operator":"replace","value":"r.example.com"}],"labelsOverrider":[{"operator":"add","value":{"a":"b"}}]}}]}}`,
	}})
}

// FuzzClusterOverridePolicy: ValidateClusterOverridePolicy never panics and judges what is stored.
func FuzzClusterOverridePolicy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[policyv1alpha1.ClusterOverridePolicy]{Create: ValidateClusterOverridePolicy, Update: ValidateClusterOverridePolicyUpdate, Seeds: []string{
		`{"metadata":{"name":"o"},"spec":{"resourceSelectors":[{"apiVersion":"v1","kind":"Namespace"}],"overrideRules":[{"overriders":{"annotationsOverrider":[{"operator":"remove","value":{"a":""}}]}}]}}`,
	}})
}

// FuzzFederatedResourceQuota: ValidateFederatedResourceQuota never panics and judges what is stored.
func FuzzFederatedResourceQuota(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[policyv1alpha1.FederatedResourceQuota]{Create: ValidateFederatedResourceQuota, Update: ValidateFederatedResourceQuotaUpdate, Seeds: []string{
		`{"metadata":{"name":"q","namespace":"default"},"spec":{"overall":{"cpu":"10","memory":"10Gi"},"staticAssignments":[{"clusterName":"member1","hard":{"cpu":"5"}}]}}`,
	}})
}

// FuzzClusterTaintPolicy: ValidateClusterTaintPolicy never panics and judges what is stored.
func FuzzClusterTaintPolicy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[policyv1alpha1.ClusterTaintPolicy]{Create: func(o *policyv1alpha1.ClusterTaintPolicy) field.ErrorList {
		return ValidateClusterTaintPolicy(o, len(o.Name)%2 == 0)
	}, Update: func(o, old *policyv1alpha1.ClusterTaintPolicy) field.ErrorList {
		return ValidateClusterTaintPolicyUpdate(o, old, len(o.Name)%2 == 0)
	}, Seeds: []string{
		`{"metadata":{"name":"t"},"spec":{"targetClusters":{"clusterNames":["member2"]},"addOnConditions":[{"conditionType":"Ready","operator":"NotIn","statusValues":["True"]}],"removeOnConditions":[{"conditionType":"Ready","operator":"In","statusValues":["True"]}],"taints":[{"key":"m","effect":"NoSchedule"}]}}`,
	}})
}
