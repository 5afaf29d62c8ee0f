package validation

import (
	"testing"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
)

// FuzzWorkloadRebalancer: ValidateWorkloadRebalancer never panics and judges what is stored.
func FuzzWorkloadRebalancer(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[appsv1alpha1.WorkloadRebalancer]{Create: ValidateWorkloadRebalancer, Update: ValidateWorkloadRebalancerUpdate, Seeds: []string{
		`{"metadata":{"name":"r"},"spec":{"workloads":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","namespace":"default"}],"ttlSecondsAfterFinished":60}}`,
	}})
}
