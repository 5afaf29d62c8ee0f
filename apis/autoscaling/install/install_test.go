package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// fuzzerFuncs fill objects as the API server stores them: defaulted, since
// decoding defaults them again and would otherwise break the round trip.
func fuzzerFuncs(runtimeserializer.CodecFactory) []any {
	return []any{
		func(s *autoscalingv1alpha1.FederatedHPASpec, c randfill.Continue) {
			c.FillNoCustom(s)
			f := autoscalingv1alpha1.FederatedHPA{Spec: *s}
			autoscalingv1alpha1.SetDefaults_FederatedHPA(&f)
			*s = f.Spec
		},
		func(r *autoscalingv1alpha1.CronFederatedHPARule, c randfill.Continue) {
			c.FillNoCustom(r)
			autoscalingv1alpha1.SetDefaults_CronFederatedHPARule(r)
		},
	}
}

var _ fuzzer.FuzzerFuncs = fuzzerFuncs

// TestRoundTrip fuzzes every kind of the group through JSON and YAML, and
// between the internal and v1alpha1 versions.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	roundtrip.RoundTripTestForAPIGroup(t, Install, fuzzerFuncs)
}
