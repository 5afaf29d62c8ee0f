package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"
)

// TestRoundTrip fuzzes every kind of the group through JSON and YAML, and
// between the internal and v1alpha1 versions.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	roundtrip.RoundTripTestForAPIGroup(t, Install, nil)
}
