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
	}, {
		Resource: "resourcerevisions",
		Manifest: `
metadata: {name: nginx-deployment-5d8f9c, namespace: default}
resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx}
binding: nginx-deployment
revision: 1
hash: 5d8f9c
template: {apiVersion: apps/v1, kind: Deployment, spec: {replicas: 2}}
`,
		ChangeSpec:  func(obj runtime.Object) { obj.(*flotillav1alpha1.ResourceRevision).Revision = 4 },
		Invalid:     func(obj runtime.Object) { obj.(*flotillav1alpha1.ResourceRevision).Hash = "" },
		InvalidPath: "hash",
	}, {
		Resource: "rolloutruns",
		Manifest: `
metadata: {name: nginx-deployment-2, namespace: default}
spec:
  resource: {apiVersion: apps/v1, kind: Deployment, namespace: default, name: nginx}
  binding: nginx-deployment
  strategy: three-stages
  fromRevision: nginx-deployment-5d8f9c
  toRevision: nginx-deployment-77aa01
`,
		ChangeSpec: func(obj runtime.Object) { obj.(*flotillav1alpha1.RolloutRun).Spec.Paused = true },
		ChangeStatus: func(obj runtime.Object) {
			obj.(*flotillav1alpha1.RolloutRun).Status.Phase = flotillav1alpha1.RolloutProgressing
		},
		Invalid:     func(obj runtime.Object) { obj.(*flotillav1alpha1.RolloutRun).Spec.Strategy = "" },
		InvalidPath: "spec.strategy",
	}})
}
