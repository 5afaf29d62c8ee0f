package validation

import (
	"testing"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/internal/validationtest"
)

// demoRebalancer is the example of Karmada's WorkloadRebalancer proposal.
const demoRebalancer = `
apiVersion: apps.karmada.io/v1alpha1
kind: WorkloadRebalancer
metadata: {name: demo}
spec:
  workloads:
    - {apiVersion: apps/v1, kind: Deployment, name: demo-deploy-1, namespace: default}
    - {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, name: demo-role}
  ttlSecondsAfterFinished: 60
`

func validRebalancer(t *testing.T) *appsv1alpha1.WorkloadRebalancer {
	t.Helper()
	r := &appsv1alpha1.WorkloadRebalancer{}
	if err := yaml.UnmarshalStrict([]byte(demoRebalancer), r); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	return r
}

func TestValidateWorkloadRebalancer(t *testing.T) {
	t.Parallel()
	type wr = appsv1alpha1.WorkloadRebalancer
	tests := []struct {
		name    string
		mutate  func(*wr)
		wantErr string
	}{
		{"valid", func(*wr) {}, ""},
		{"no ttl", func(r *wr) { r.Spec.TTLSecondsAfterFinished = nil }, ""},
		{"ttl 0", func(r *wr) { r.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) }, ""},
		{"namespaced", func(r *wr) { r.Namespace = "default" }, "metadata.namespace: Forbidden"},
		{"bad name", func(r *wr) { r.Name = "Demo" }, "metadata.name: Invalid"},
		{"no workloads", func(r *wr) { r.Spec.Workloads = nil }, "spec.workloads: Required"},
		{"workload without apiVersion", func(r *wr) { r.Spec.Workloads[0].APIVersion = "" }, "spec.workloads[0].apiVersion: Required"},
		{"workload bad apiVersion", func(r *wr) { r.Spec.Workloads[0].APIVersion = "a/b/c" }, "spec.workloads[0].apiVersion: Invalid"},
		{"workload without kind", func(r *wr) { r.Spec.Workloads[1].Kind = "" }, "spec.workloads[1].kind: Required"},
		{"workload without name", func(r *wr) { r.Spec.Workloads[1].Name = "" }, "spec.workloads[1].name: Required"},
		{"workload bad namespace", func(r *wr) { r.Spec.Workloads[0].Namespace = "Default" }, "spec.workloads[0].namespace: Invalid"},
		{"negative ttl", func(r *wr) { r.Spec.TTLSecondsAfterFinished = ptr.To[int32](-1) }, "spec.ttlSecondsAfterFinished: Invalid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := validRebalancer(t)
			tc.mutate(r)
			validationtest.Expect(t, ValidateWorkloadRebalancer(r).ToAggregate(), tc.wantErr)
		})
	}
}

func TestValidateWorkloadRebalancerUpdate(t *testing.T) {
	t.Parallel()
	old := validRebalancer(t)
	old.ResourceVersion = "1"
	r := old.DeepCopy()
	r.Spec.Workloads = r.Spec.Workloads[:1]
	validationtest.Expect(t, ValidateWorkloadRebalancerUpdate(r, old).ToAggregate(), "")
	r.Spec.Workloads = nil
	validationtest.Expect(t, ValidateWorkloadRebalancerUpdate(r, old).ToAggregate(), "spec.workloads: Required")
	r = old.DeepCopy()
	r.Name = "other"
	validationtest.Expect(t, ValidateWorkloadRebalancerUpdate(r, old).ToAggregate(), "metadata.name")
}
