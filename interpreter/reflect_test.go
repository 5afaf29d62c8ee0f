package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReflectStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		obj     string
		want    string // YAML of the reflected status; "" = nil
		wantErr bool
	}{
		{
			name: "deployment subset with generations",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, generation: 4, annotations: {resourcetemplate.karmada.io/generation: "7"}}
status:
  replicas: 3
  updatedReplicas: 2
  readyReplicas: 1
  availableReplicas: 1
  unavailableReplicas: 2
  observedGeneration: 4
  conditions: [{type: Available, status: "True"}]
  collisionCount: 1`,
			want: `{replicas: 3, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1, unavailableReplicas: 2,
observedGeneration: 4, generation: 4, resourceTemplateGeneration: 7}`,
		},
		{
			name:    "bad generation annotation is an error",
			obj:     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, annotations: {resourcetemplate.karmada.io/generation: x}}\nstatus: {replicas: 1}",
			wantErr: true,
		},
		{
			name: "deployment without status is not reported",
			obj:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}",
		},
		{
			name: "deployment with empty status is not reported",
			obj:  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nstatus: {}",
		},
		{
			name: "replicaset subset",
			obj:  "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 2}\nstatus: {replicas: 2, readyReplicas: 2, availableReplicas: 1, fullyLabeledReplicas: 2, observedGeneration: 2}",
			want: "{replicas: 2, readyReplicas: 2, availableReplicas: 1, observedGeneration: 2, generation: 2}",
		},
		{
			name: "statefulset subset",
			obj: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, generation: 1, annotations: {resourcetemplate.karmada.io/generation: "1"}}
status: {replicas: 2, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1, currentRevision: r1, collisionCount: 0}`,
			want: "{replicas: 2, readyReplicas: 2, currentReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1, generation: 1, resourceTemplateGeneration: 1}",
		},
		{
			name: "daemonset subset",
			obj: `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, generation: 3}
status: {currentNumberScheduled: 2, desiredNumberScheduled: 3, numberAvailable: 1, numberMisscheduled: 1, numberReady: 1, updatedNumberScheduled: 2, numberUnavailable: 2, observedGeneration: 3, collisionCount: 5}`,
			want: "{currentNumberScheduled: 2, desiredNumberScheduled: 3, numberAvailable: 1, numberMisscheduled: 1, numberReady: 1, updatedNumberScheduled: 2, numberUnavailable: 2, observedGeneration: 3, generation: 3}",
		},
		{
			name: "loadbalancer service reports loadBalancer only",
			obj: `apiVersion: v1
kind: Service
metadata: {name: s}
spec: {type: LoadBalancer}
status: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}, conditions: [{type: x, status: "True"}]}`,
			want: "{loadBalancer: {ingress: [{ip: 1.2.3.4}]}}",
		},
		{
			name: "clusterip service is not reported",
			obj:  "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}\nstatus: {loadBalancer: {}}",
		},
		{
			name: "ingress whole status",
			obj:  "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nstatus: {loadBalancer: {ingress: [{hostname: h}]}}",
			want: "{loadBalancer: {ingress: [{hostname: h}]}}",
		},
		{
			name: "job subset",
			obj: `apiVersion: batch/v1
kind: Job
metadata: {name: j}
status:
  active: 1
  succeeded: 2
  failed: 3
  ready: 1
  uncountedTerminatedPods: {}
  startTime: "2026-01-01T00:00:00Z"
  completionTime: "2026-01-01T01:00:00Z"
  conditions: [{type: Complete, status: "True", lastProbeTime: "2026-01-01T01:00:00Z", lastTransitionTime: "2026-01-01T01:00:00Z"}]`,
			want: `active: 1
succeeded: 2
failed: 3
startTime: "2026-01-01T00:00:00Z"
completionTime: "2026-01-01T01:00:00Z"
conditions: [{type: Complete, status: "True", lastProbeTime: "2026-01-01T01:00:00Z", lastTransitionTime: "2026-01-01T01:00:00Z"}]`,
		},
		{
			name: "pdb subset",
			obj:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nstatus: {disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, observedGeneration: 1}",
			want: "{disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3}",
		},
		{
			name: "hpa subset",
			obj:  "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nstatus: {currentReplicas: 2, desiredReplicas: 4, lastScaleTime: \"2026-01-01T00:00:00Z\"}",
			want: "{currentReplicas: 2, desiredReplicas: 4}",
		},
		{
			name: "other kinds: whole status",
			obj:  "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running, podIP: 1.1.1.1}",
			want: "{phase: Running, podIP: 1.1.1.1}",
		},
		{
			name: "unknown kind without status",
			obj:  "apiVersion: example.io/v1\nkind: Foo\nmetadata: {name: f}",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := NewNative().ReflectStatus(obj(t, tc.obj))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.want == "" {
				if got != nil {
					t.Errorf("got %s, want nil", got.Raw)
				}
				return
			}
			if got == nil {
				t.Fatal("got nil")
			}
			if diff := cmp.Diff(yamlMap(t, tc.want), asMap(t, got.Raw)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
