package rollout

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	r := func(obj runtime.Object) *flotillav1alpha1.RolloutStrategy {
		return obj.(*flotillav1alpha1.RolloutStrategy)
	}
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{{
		Resource: "rolloutstrategies",
		Manifest: `
metadata: {name: three-stages}
spec:
  stages:
  - name: canary
    clusters: {names: [member1]}
    before: [{type: Approval}]
  - name: rest
    clusters: {labelSelector: {matchLabels: {env: prod}}}
    after: [{type: Wait, duration: 10m}]
`,
		ChangeSpec:   func(obj runtime.Object) { r(obj).Spec.Stages[0].Clusters.Names = []string{"member1", "member2"} },
		ChangeStatus: func(obj runtime.Object) { r(obj).Status.ObservedGeneration = 3 },
		Invalid:      func(obj runtime.Object) { r(obj).Spec.Stages[1].Name = "canary" },
		InvalidPath:  "spec.stages[1].name",
		Defaulted: func(obj runtime.Object) bool {
			st := r(obj).Spec.Stages[1]
			return st.MaxConcurrency != nil && st.SoakTime != nil && st.ProgressDeadline != nil && st.MaxFailures != nil
		},
	}})
}
