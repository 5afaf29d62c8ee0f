package validation

import (
	"testing"

	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// FuzzWork: ValidateWork never panics and judges what is stored.
func FuzzWork(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[workv1alpha1.Work]{Create: ValidateWork, Update: ValidateWorkUpdate, Seeds: []string{
		`{"metadata":{"name":"w","namespace":"karmada-es-member1"},"spec":{"workload":{"manifests":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}]}}}`,
	}})
}

// FuzzResourceBinding: ValidateResourceBinding never panics and judges what is stored.
func FuzzResourceBinding(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[workv1alpha2.ResourceBinding]{Create: ValidateResourceBinding, Update: ValidateResourceBindingUpdate, Seeds: []string{
		`{"metadata":{"name":"web-deployment","namespace":"default"},"spec":{"resource":{"apiVersion":"apps/v1","kind":"Deployment","name":"web","namespace":"default"},"replicas":2,"clusters":[{"name":"member1","replicas":1},{"name":"member2","replicas":1}]}}`,
	}})
}

// FuzzClusterResourceBinding: ValidateClusterResourceBinding never panics and judges what is stored.
func FuzzClusterResourceBinding(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[workv1alpha2.ClusterResourceBinding]{Create: ValidateClusterResourceBinding, Update: ValidateClusterResourceBindingUpdate, Seeds: []string{
		`{"metadata":{"name":"cr-clusterrole"},"spec":{"resource":{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","name":"cr"},"clusters":[{"name":"member1"}]}}`,
	}})
}
