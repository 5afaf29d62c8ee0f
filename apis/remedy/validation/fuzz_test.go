package validation

import (
	"testing"

	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
)

// FuzzRemedy: ValidateRemedy never panics and judges what is stored.
func FuzzRemedy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[remedyv1alpha1.Remedy]{Create: ValidateRemedy, Update: ValidateRemedyUpdate, Seeds: []string{
		`{"metadata":{"name":"r"},"spec":{"clusterAffinity":{"clusterNames":["member1"]},"decisionMatches":[{"clusterConditionMatch":{"conditionType":"ServiceDomainNameResolutionReady","operator":"Equal","conditionStatus":"False"}}],"actions":["TrafficControl"]}}`,
	}})
}
