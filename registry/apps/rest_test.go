package apps

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	wr := func(obj runtime.Object) *appsv1alpha1.WorkloadRebalancer {
		return obj.(*appsv1alpha1.WorkloadRebalancer)
	}
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{{
		Resource: "workloadrebalancers",
		Manifest: `
metadata: {name: demo}
spec:
  workloads:
    - {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default}
`,
		ChangeSpec: func(obj runtime.Object) {
			wr(obj).Spec.Workloads = append(wr(obj).Spec.Workloads, appsv1alpha1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cfg", Namespace: "default"})
		},
		ChangeStatus: func(obj runtime.Object) { wr(obj).Status.ObservedGeneration = 3 },
		Invalid:      func(obj runtime.Object) { wr(obj).Spec.Workloads[0].Kind = "" },
		InvalidPath:  "spec.workloads[0].kind",
	}})
}
