package validation

import (
	"testing"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
)

// FuzzFederatedHPA: ValidateFederatedHPA never panics and judges what is stored.
func FuzzFederatedHPA(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[autoscalingv1alpha1.FederatedHPA]{Create: ValidateFederatedHPA, Update: ValidateFederatedHPAUpdate, Seeds: []string{
		`{"metadata":{"name":"web","namespace":"default"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":10,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}}`,
	}})
}

// FuzzCronFederatedHPA: ValidateCronFederatedHPA never panics and judges what is stored.
func FuzzCronFederatedHPA(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[autoscalingv1alpha1.CronFederatedHPA]{Create: ValidateCronFederatedHPA, Update: ValidateCronFederatedHPAUpdate, Seeds: []string{
		`{"metadata":{"name":"c","namespace":"default"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"rules":[{"name":"up","schedule":"*/1 * * * *","targetReplicas":3,"timeZone":"Europe/Paris"}]}}`,
	}})
}
