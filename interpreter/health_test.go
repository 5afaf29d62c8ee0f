package interpreter

import (
	"testing"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestInterpretHealth(t *testing.T) {
	t.Parallel()
	const (
		healthy   = workv1alpha2.ResourceHealthy
		unhealthy = workv1alpha2.ResourceUnhealthy
		unknown   = workv1alpha2.ResourceUnknown
	)
	tests := []struct {
		name string
		obj  string
		want workv1alpha2.ResourceHealth
	}{
		{"deployment healthy", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\nspec: {replicas: 3}\nstatus: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3}", healthy},
		{"deployment surge: more updated than spec", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\nspec: {replicas: 3}\nstatus: {observedGeneration: 2, updatedReplicas: 4, availableReplicas: 4}", healthy},
		{"deployment generation not observed", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 3}\nspec: {replicas: 3}\nstatus: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 3}", unhealthy},
		{"deployment not all updated", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\nspec: {replicas: 3}\nstatus: {observedGeneration: 2, updatedReplicas: 2, availableReplicas: 3}", unhealthy},
		{"deployment available below updated", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 2}\nspec: {replicas: 3}\nstatus: {observedGeneration: 2, updatedReplicas: 3, availableReplicas: 2}", unhealthy},
		{"deployment nil replicas defaults to 1", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 1}\nstatus: {observedGeneration: 1}", unhealthy},
		{"deployment zero replicas", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, generation: 1}\nspec: {replicas: 0}\nstatus: {observedGeneration: 1}", healthy},
		{"statefulset healthy", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, generation: 1}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, updatedReplicas: 2, availableReplicas: 2}", healthy},
		{"statefulset unavailable", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, generation: 1}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, updatedReplicas: 2, availableReplicas: 1}", unhealthy},
		{"replicaset healthy", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 1}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, availableReplicas: 2}", healthy},
		{"replicaset short", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, generation: 1}\nspec: {replicas: 2}\nstatus: {observedGeneration: 1, availableReplicas: 1}", unhealthy},
		{"daemonset healthy", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, generation: 1}\nstatus: {observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3}", healthy},
		{"daemonset not updated", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, generation: 1}\nstatus: {observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3}", unhealthy},
		{"daemonset not available", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: ds, generation: 1}\nstatus: {observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2}", unhealthy},
		{"clusterip service", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: ClusterIP}", healthy},
		{"lb service with ip", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}", healthy},
		{"lb service with hostname", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{hostname: h}]}}", healthy},
		{"lb service without ingress", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {}}", unhealthy},
		{"lb service with empty ingress", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {type: LoadBalancer}\nstatus: {loadBalancer: {ingress: [{ipMode: VIP}]}}", unhealthy},
		{"ingress with ip", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}\nstatus: {loadBalancer: {ingress: [{ip: 1.2.3.4}]}}", healthy},
		{"ingress without", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: i}", unhealthy},
		{"pvc bound", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nstatus: {phase: Bound}", healthy},
		{"pvc pending", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nstatus: {phase: Pending}", unhealthy},
		{"pod succeeded", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Succeeded}", healthy},
		{"pod running ready", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running, conditions: [{type: Ready, status: \"True\"}]}", healthy},
		{"pod running not ready", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Running, conditions: [{type: Ready, status: \"False\"}]}", unhealthy},
		{"pod pending", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: {phase: Pending}", unhealthy},
		{"pdb healthy", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nstatus: {currentHealthy: 2, desiredHealthy: 2}", healthy},
		{"pdb short", "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nstatus: {currentHealthy: 1, desiredHealthy: 2}", unhealthy},
		{"job has no rule", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}", unknown},
		{"configmap has no rule", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}", unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := NewNative().InterpretHealth(obj(t, tc.obj))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("health = %s, want %s", got, tc.want)
			}
		})
	}
}
