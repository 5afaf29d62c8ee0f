package validation

import (
	"testing"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
)

// FuzzCluster: ValidateCluster never panics and judges what is stored.
func FuzzCluster(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[clusterv1alpha1.Cluster]{Create: ValidateCluster, Update: ValidateClusterUpdate, Seeds: []string{
		`{"metadata":{"name":"member1","resourceVersion":"1"},"spec":{"syncMode":"Push","apiEndpoint":"https://127.0.0.1:6443","secretRef":{"namespace":"karmada-cluster","name":"member1"},"taints":[{"key":"a","effect":"NoSchedule"}]}}`,
		`{"metadata":{"name":"member3"},"spec":{"syncMode":"Pull","id":"x","zones":["a"],"resourceModels":[{"grade":0,"ranges":[{"name":"cpu","min":"0","max":"1"}]}]}}`,
	}})
}
