package interpreter

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// SpecRequirements answers what PodRequirements answers on the typed spec,
// call after call, whatever the previous calls left in the pooled Pod.
func TestSpecRequirementsMatchTyped(t *testing.T) {
	specs := []string{
		`{containers: [{name: a, image: x, resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: "1"}}}, {name: b, resources: {requests: {cpu: 50m}}}]}`,
		`{containers: [{name: a, image: x}]}`,
		`{initContainers: [{name: i, resources: {requests: {cpu: "2"}}}, {name: s, restartPolicy: Always, resources: {requests: {memory: 1Gi}}}], containers: [{name: a, resources: {requests: {cpu: 300m}}}], overhead: {cpu: 10m}}`,
		`{containers: [{name: a, resources: {requests: {cpu: 100m}, claims: [{name: gpu}]}}, {name: b, resources: {requests: {memory: 2Gi}}}], tolerations: [{key: k, operator: Exists}], priorityClassName: high}`,
		`{containers: [{name: a, resources: {requests: {memory: 1Mi}}}, {name: b}, {name: c, resources: {requests: {cpu: 1}}}]}`,
		`{resources: {requests: {cpu: "4"}}, containers: [{name: a, resources: {requests: {cpu: 1, memory: 1Gi}}}], nodeSelector: {disk: ssd}}`,
		`{containers: [{name: a, resources: {requests: {cpu: 7}}}]}`,
	}
	for round := range 3 {
		for i, y := range specs {
			var spec map[string]any
			if err := yaml.Unmarshal([]byte(y), &spec); err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(spec)
			var typed corev1.Pod
			if err := json.Unmarshal(raw, &typed.Spec); err != nil {
				t.Fatal(err)
			}
			want := PodRequirements(&typed)
			got, priorityClass, err := SpecRequirements(spec)
			if err != nil {
				t.Fatalf("round %d, spec %d: %v", round, i, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("round %d, spec %d (-want +got):\n%s", round, i, diff)
			}
			if priorityClass != typed.Spec.PriorityClassName {
				t.Errorf("round %d, spec %d: priority class %q, want %q", round, i, priorityClass, typed.Spec.PriorityClassName)
			}
		}
	}
}
