package validation

import (
	"testing"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/fuzzvalidation"
)

// FuzzRolloutStrategy: ValidateRolloutStrategy never panics and judges what
// is stored.
func FuzzRolloutStrategy(f *testing.F) {
	fuzzvalidation.Fuzz(f, fuzzvalidation.Kind[flotillav1alpha1.RolloutStrategy]{Create: ValidateRolloutStrategy, Update: ValidateRolloutStrategyUpdate, Seeds: []string{
		`{"metadata":{"name":"s"},"spec":{"stages":[{"name":"canary","clusters":{"names":["member1"]},"maxConcurrency":1,"before":[{"type":"Approval"}]},{"name":"rest","clusters":{"labelSelector":{"matchLabels":{"env":"prod"}},"orderByLabel":"region"},"maxConcurrency":"50%","soakTime":"5m","progressDeadline":"10m","maxFailures":1,"after":[{"type":"Wait","duration":"10m"}]}]}}`,
	}})
}
