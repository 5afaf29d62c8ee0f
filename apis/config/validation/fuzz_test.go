package validation

import (
	"testing"

	configv1alpha1 "github.com/flotilla-io/flotilla/apis/config/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
)

// FuzzResourceInterpreterCustomization: ValidateResourceInterpreterCustomization never panics and judges what is stored.
func FuzzResourceInterpreterCustomization(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[configv1alpha1.ResourceInterpreterCustomization]{Create: ValidateResourceInterpreterCustomization, Update: ValidateResourceInterpreterCustomizationUpdate, Seeds: []string{
		`{"metadata":{"name":"c"},"spec":{"target":{"apiVersion":"apps/v1","kind":"Deployment"},"customizations":{"replicaResource":{"luaScript":"function GetReplicas(obj)\n return obj.spec.replicas, {}\nend"},"healthInterpretation":{"luaScript":"function InterpretHealth(obj) return true end"}}}}`,
	}})
}

// FuzzResourceInterpreterWebhookConfiguration: ValidateResourceInterpreterWebhookConfiguration never panics and judges what is stored.
func FuzzResourceInterpreterWebhookConfiguration(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[configv1alpha1.ResourceInterpreterWebhookConfiguration]{Create: ValidateResourceInterpreterWebhookConfiguration, Update: ValidateResourceInterpreterWebhookConfigurationUpdate, Seeds: []string{
		`{"metadata":{"name":"w"},"webhooks":[{"name":"w.example.com","clientConfig":{"url":"https://w.example.com/i"},"rules":[{"operations":["InterpretReplica"],"apiGroups":["apps"],"apiVersions":["v1"],"kinds":["Deployment"]}],"interpreterContextVersions":["v1alpha1"]}]}`,
	}})
}
