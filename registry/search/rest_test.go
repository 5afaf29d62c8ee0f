package search

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	searchv1alpha1 "github.com/flotilla-io/flotilla/apis/search/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	rr := func(obj runtime.Object) *searchv1alpha1.ResourceRegistry {
		return obj.(*searchv1alpha1.ResourceRegistry)
	}
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{{
		Resource: "resourceregistries",
		Manifest: `
metadata: {name: deployments}
spec:
  targetCluster: {clusterNames: [member1]}
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment}
`,
		ChangeSpec: func(obj runtime.Object) {
			rr(obj).Spec.ResourceSelectors = append(rr(obj).Spec.ResourceSelectors, searchv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "Pod"})
		},
		ChangeStatus: func(obj runtime.Object) {
			rr(obj).Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Synced",
				LastTransitionTime: metav1.Now()}}
		},
		Invalid:     func(obj runtime.Object) { rr(obj).Spec.ResourceSelectors = nil },
		InvalidPath: "spec.resourceSelectors",
		InvalidStatus: func(obj runtime.Object) {
			rr(obj).Status.Conditions = []metav1.Condition{{Type: "Ready", Status: "Maybe", Reason: "Synced", LastTransitionTime: metav1.Now()}}
		},
		InvalidStatusPath: "status.conditions[0].status",
	}})
}
