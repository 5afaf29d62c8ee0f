package autoscaling

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/registry/internal/resource/resourcetest"
)

func TestStrategies(t *testing.T) {
	t.Parallel()
	fhpa := func(obj runtime.Object) *autoscalingv1alpha1.FederatedHPA {
		return obj.(*autoscalingv1alpha1.FederatedHPA)
	}
	cron := func(obj runtime.Object) *autoscalingv1alpha1.CronFederatedHPA {
		return obj.(*autoscalingv1alpha1.CronFederatedHPA)
	}
	resourcetest.Run(t, Definitions(), []resourcetest.Kind{
		{
			Resource: "federatedhpas",
			Manifest: `
metadata: {name: nginx, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 1
  maxReplicas: 10
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 10}}
`,
			ChangeSpec:        func(obj runtime.Object) { fhpa(obj).Spec.MaxReplicas = 20 },
			ChangeStatus:      func(obj runtime.Object) { fhpa(obj).Status.CurrentReplicas = 3 },
			Invalid:           func(obj runtime.Object) { fhpa(obj).Spec.MaxReplicas = 0 },
			InvalidPath:       "spec.maxReplicas",
			InvalidStatus:     func(obj runtime.Object) { fhpa(obj).Status.DesiredReplicas = -1 },
			InvalidStatusPath: "status.desiredReplicas",
		},
		{
			Resource: "cronfederatedhpas",
			Manifest: `
metadata: {name: nginx-cron, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  rules:
    - {name: scale-up, schedule: "*/1 * * * *", targetReplicas: 5}
`,
			ChangeSpec: func(obj runtime.Object) { cron(obj).Spec.Rules[0].Schedule = "*/2 * * * *" },
			ChangeStatus: func(obj runtime.Object) {
				cron(obj).Status.ExecutionHistories = []autoscalingv1alpha1.ExecutionHistory{{RuleName: "scale-up"}}
			},
			Invalid:     func(obj runtime.Object) { cron(obj).Spec.Rules[0].Schedule = "every minute" },
			InvalidPath: "spec.rules[0].schedule",
		},
	})
}
