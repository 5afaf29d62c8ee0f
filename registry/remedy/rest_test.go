package remedy

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	remedyv1alpha1 "github.com/flotilla-io/flotilla/apis/remedy/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	r := func(obj runtime.Object) *remedyv1alpha1.Remedy { return obj.(*remedyv1alpha1.Remedy) }
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{{
		Resource: "remedies",
		Manifest: `
metadata: {name: dns}
spec:
  clusterAffinity: {clusterNames: [member1]}
  decisionMatches:
    - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: Equal, conditionStatus: "False"}
  actions: [TrafficControl]
`,
		ChangeSpec:  func(obj runtime.Object) { r(obj).Spec.ClusterAffinity.ClusterNames = []string{"member1", "member2"} },
		Invalid:     func(obj runtime.Object) { r(obj).Spec.Actions = []remedyv1alpha1.RemedyAction{"Reboot"} },
		InvalidPath: "spec.actions[0]",
	}})
}
