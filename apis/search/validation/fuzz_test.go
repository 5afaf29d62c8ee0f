package validation

import (
	"testing"

	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
)

// FuzzResourceRegistry: ValidateResourceRegistry never panics and judges what is stored.
func FuzzResourceRegistry(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[searchv1alpha1.ResourceRegistry]{Create: ValidateResourceRegistry, Update: ValidateResourceRegistryUpdate, Seeds: []string{
		`{"metadata":{"name":"r"},"spec":{"targetCluster":{"clusterNames":["member1"]},"resourceSelectors":[{"apiVersion":"apps/v1","kind":"Deployment","namespace":"default"}]}}`,
	}})
}
