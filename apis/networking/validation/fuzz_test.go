package validation

import (
	"testing"

	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
)

// FuzzMultiClusterService: ValidateMultiClusterService never panics and judges what is stored.
func FuzzMultiClusterService(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[networkingv1alpha1.MultiClusterService]{Create: ValidateMultiClusterService, Update: ValidateMultiClusterServiceUpdate, Seeds: []string{
		`{"metadata":{"name":"s","namespace":"default"},"spec":{"types":["CrossCluster"],"ports":[{"name":"http","port":80}],"providerClusters":[{"name":"member1"}],"consumerClusters":[{"name":"member2"}]}}`,
	}})
}

// FuzzMultiClusterIngress: ValidateMultiClusterIngress never panics and judges what is stored.
func FuzzMultiClusterIngress(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[networkingv1alpha1.MultiClusterIngress]{Create: ValidateMultiClusterIngress, Update: ValidateMultiClusterIngressUpdate, Seeds: []string{
		`{"metadata":{"name":"i","namespace":"default"},"spec":{"rules":[{"host":"a.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"web","port":{"number":80}}}}]}}]}}`,
	}})
}
