package thirdparty

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/interpreter"
)

// The multi-template workloads shipped as Karmada ships them: Flink's
// FlinkDeployment and Volcano's Job. The objects are the shapes of
// Karmada's testdata for these customizations.

// observedFlink is a FlinkDeployment as the Flink operator leaves it.
const observedFlink = `
apiVersion: flink.apache.org/v1beta1
kind: FlinkDeployment
metadata: {name: basic-example, namespace: test-namespace, generation: 1}
spec:
  flinkConfiguration: {taskmanager.numberOfTaskSlots: "2"}
  flinkVersion: v1_17
  image: flink:1.17
  job: {jarURI: "local:///opt/flink/examples/streaming/StateMachineExample.jar", parallelism: 2, state: running, upgradeMode: stateless}
  jobManager: {replicas: 1, resource: {cpu: 1, memory: 2048m}}
  serviceAccount: flink
  taskManager: {resource: {cpu: 1, memory: 2048m}}
status:
  clusterInfo: {flink-revision: "2750d5c @ 2023-05-19T10:45:46+02:00", flink-version: 1.17.1, total-cpu: "2.0", total-memory: "4294967296"}
  jobManagerDeploymentStatus: READY
  jobStatus:
    checkpointInfo: {lastPeriodicCheckpointTimestamp: 0}
    jobId: 44cc5573945d1d4925732d915c70b9ac
    jobName: Minimal Spec Example
    savepointInfo: {lastPeriodicSavepointTimestamp: 0, savepointHistory: []}
    startTime: "1717599166365"
    state: RUNNING
    updateTime: "1717599182544"
  lifecycleState: STABLE
  observedGeneration: 1
  reconciliationStatus: {reconciliationTimestamp: 1717599148930, state: DEPLOYED}
  taskManager: {labelSelector: "component=taskmanager,app=basic-example", replicas: 1}
`

func requests(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

func withSpec(t *testing.T, y string, set func(obj *unstructured.Unstructured)) *unstructured.Unstructured {
	obj := object(t, y)
	set(obj)
	return obj
}

func TestFlinkDeploymentReplicas(t *testing.T) {
	c := shipped(t)
	for _, tc := range []struct {
		name       string
		obj        *unstructured.Unstructured
		components []workv1alpha2.Component
		replicas   int32
		req        *workv1alpha2.ReplicaRequirements
	}{{
		name: "task managers from parallelism over task slots",
		obj: withSpec(t, observedFlink, func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(10), "spec", "job", "parallelism")
		}),
		components: []workv1alpha2.Component{
			{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("1", "2048m")}},
			{Name: "taskmanager", Replicas: 5, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("1", "2048m")}},
		},
		replicas: 6,
		// No pod template: Karmada's script returns nodeClaim = {}, absent here.
		req: &workv1alpha2.ReplicaRequirements{ResourceRequest: requests("1", "2048m"), Namespace: "test-namespace"},
	}, {
		name: "taskManager.replicas wins over parallelism; the larger request; the pod template's claim",
		obj: withSpec(t, observedFlink, func(o *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(o.Object, int64(3), "spec", "taskManager", "replicas")
			_ = unstructured.SetNestedField(o.Object, "4Gi", "spec", "taskManager", "resource", "memory")
			_ = unstructured.SetNestedField(o.Object, 0.5, "spec", "taskManager", "resource", "cpu")
			_ = unstructured.SetNestedField(o.Object, map[string]any{"spec": map[string]any{
				"nodeSelector":      map[string]any{"disk": "ssd"},
				"tolerations":       []any{map[string]any{"key": "flink", "operator": "Exists", "effect": "NoSchedule"}},
				"priorityClassName": "streaming",
			}}, "spec", "podTemplate")
		}),
		components: func() []workv1alpha2.Component {
			claim := &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}, Tolerations: []corev1.Toleration{{Key: "flink", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
			return []workv1alpha2.Component{
				{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{NodeClaim: claim, ResourceRequest: requests("1", "2048m"), PriorityClassName: "streaming"}},
				{Name: "taskmanager", Replicas: 3, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{NodeClaim: claim, ResourceRequest: requests("500m", "4Gi"), PriorityClassName: "streaming"}},
			}
		}(),
		replicas: 4,
		req: &workv1alpha2.ReplicaRequirements{
			NodeClaim:       &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"disk": "ssd"}, Tolerations: []corev1.Toleration{{Key: "flink", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}},
			ResourceRequest: requests("1", "4Gi"), Namespace: "test-namespace", PriorityClassName: "streaming",
		},
	}, {
		name: "no parallelism: one task manager",
		obj: withSpec(t, observedFlink, func(o *unstructured.Unstructured) {
			unstructured.RemoveNestedField(o.Object, "spec", "job")
			unstructured.RemoveNestedField(o.Object, "spec", "jobManager", "replicas")
		}),
		components: []workv1alpha2.Component{
			{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("1", "2048m")}},
			{Name: "taskmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("1", "2048m")}},
		},
		replicas: 2,
		req:      &workv1alpha2.ReplicaRequirements{ResourceRequest: requests("1", "2048m"), Namespace: "test-namespace"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if !c.HookEnabled(tc.obj.GroupVersionKind(), interpreter.InterpretComponent) {
				t.Fatal("no component interpretation for FlinkDeployment")
			}
			got, err := c.GetComponents(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.components, got); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
			n, req, err := c.GetReplicas(tc.obj)
			if err != nil || n != tc.replicas {
				t.Fatalf("GetReplicas = %d, %v; want %d", n, err, tc.replicas)
			}
			if diff := cmp.Diff(tc.req, req); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFlinkDeploymentHealth(t *testing.T) {
	c := shipped(t)
	for _, tc := range []struct {
		name   string
		status map[string]any
		want   workv1alpha2.ResourceHealth
	}{
		{"no status", nil, workv1alpha2.ResourceUnhealthy},
		{"running", map[string]any{"jobStatus": map[string]any{"state": "RUNNING"}}, workv1alpha2.ResourceHealthy},
		{"finished", map[string]any{"jobStatus": map[string]any{"state": "FINISHED"}}, workv1alpha2.ResourceHealthy},
		{"failing, about to be failed", map[string]any{"jobStatus": map[string]any{"state": "FAILING"}}, workv1alpha2.ResourceHealthy},
		{"created", map[string]any{"jobStatus": map[string]any{"state": "CREATED"}}, workv1alpha2.ResourceUnhealthy},
		{"reconciling with an error published", map[string]any{"jobStatus": map[string]any{"state": "RECONCILING"}, "error": "image not found"}, workv1alpha2.ResourceHealthy},
		{"initializing, job manager deployment in error", map[string]any{"jobStatus": map[string]any{"state": "INITIALIZING"}, "jobManagerDeploymentStatus": "ERROR"}, workv1alpha2.ResourceHealthy},
		{"no job state", map[string]any{"jobManagerDeploymentStatus": "DEPLOYING"}, workv1alpha2.ResourceUnhealthy},
		{"no job state, an error", map[string]any{"error": "bad spec"}, workv1alpha2.ResourceHealthy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, observedFlink)
			delete(obj.Object, "status")
			if tc.status != nil {
				obj.Object["status"] = tc.status
			}
			if got, err := c.InterpretHealth(obj); got != tc.want || err != nil {
				t.Errorf("health %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestFlinkDeploymentStatus(t *testing.T) {
	c := shipped(t)
	observed := object(t, observedFlink)
	st, err := c.ReflectStatus(observed)
	if err != nil {
		t.Fatal(err)
	}
	want := observed.Object["status"]
	var reflected map[string]any
	if err := yamlUnmarshal(st.Raw, &reflected); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonRoundTrip(t, want), reflected); diff != "" {
		t.Errorf("reflected status (-want +got):\n%s", diff)
	}

	desired := object(t, observedFlink)
	delete(desired.Object, "status")
	for _, tc := range []struct {
		name  string
		items []workv1alpha2.AggregatedStatusItem
		want  any
	}{
		{name: "no member reported", items: nil, want: nil},
		{name: "the reporting member's status", items: items(`{"jobManagerDeploymentStatus":"DEPLOYING","lifecycleState":"DEPLOYED","jobStatus":{"state":"CREATED"}}`, string(st.Raw)), want: jsonRoundTrip(t, want)},
		{name: "a member with no status yet does not hide the other's", items: items(string(st.Raw), `{}`), want: jsonRoundTrip(t, want)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agg, err := c.AggregateStatus(desired, tc.items)
			if err != nil {
				t.Fatal(err)
			}
			got := jsonRoundTrip(t, agg.Object["status"])
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("aggregated status (-want +got):\n%s", diff)
			}
		})
	}
}

// observedVolcanoJob is a completed Volcano Job of two tasks.
const observedVolcanoJob = `
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: dk-job, namespace: ns}
spec:
  maxRetry: 3
  minAvailable: 3
  plugins: {env: [], ssh: [], svc: ["--disable-network-policy=true"]}
  queue: default
  schedulerName: volcano
  tasks:
  - minAvailable: 1
    name: job-nginx1
    replicas: 1
    template:
      metadata: {name: nginx1}
      spec:
        containers: [{args: ["sleep 10"], command: [bash, -c], image: "nginx:latest", name: nginx, resources: {requests: {cpu: 100m}}}]
        nodeSelector: {kubernetes.io/os: linux}
        restartPolicy: OnFailure
  - minAvailable: 2
    name: job-nginx2
    replicas: 3
    template:
      metadata: {name: nginx2}
      spec:
        containers: [{args: ["sleep 30"], command: [bash, -c], image: "nginx:latest", name: nginx, resources: {requests: {cpu: 100m, memory: 128Mi}}}]
        restartPolicy: OnFailure
status:
  conditions:
  - {lastTransitionTime: "2025-09-29T10:57:03Z", status: Pending}
  - {lastTransitionTime: "2025-09-29T10:57:07Z", status: Running}
  - {lastTransitionTime: "2025-09-29T10:57:38Z", status: Completed}
  failed: 0
  minAvailable: 3
  pending: 0
  retryCount: 0
  running: 0
  runningDuration: 35.688396584s
  state: {lastTransitionTime: "2025-09-29T10:57:38Z", phase: Completed}
  succeeded: 4
  taskStatusCount:
    job-nginx1: {phase: {Succeeded: 1}}
    job-nginx2: {phase: {Succeeded: 3}}
  terminating: 0
  unknown: 0
  version: 1
`

func TestVolcanoJobComponents(t *testing.T) {
	c := shipped(t)
	for _, tc := range []struct {
		name  string
		tasks string
		want  []workv1alpha2.Component
	}{{
		name:  "tasks with names",
		tasks: "",
		want: []workv1alpha2.Component{
			{Name: "job-nginx1", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{
				NodeClaim: &workv1alpha2.NodeClaim{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}, ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
			{Name: "job-nginx2", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("100m", "128Mi")}},
		},
	}, {
		name: "tasks without names or minAvailable",
		tasks: `[{template: {spec: {containers: [{name: a, image: x, resources: {requests: {cpu: 1000m, memory: 1Gi}}}]}}},
		         {minAvailable: 2, template: {spec: {containers: [{name: b, image: x, resources: {requests: {cpu: 200m, memory: 1Gi}}}]}}}]`,
		want: []workv1alpha2.Component{
			{Name: "task-0", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("1", "1Gi")}},
			{Name: "task-1", Replicas: 2, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: requests("200m", "1Gi")}},
		},
	}, {
		name:  "no tasks",
		tasks: "null",
		want:  []workv1alpha2.Component{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, observedVolcanoJob)
			if tc.tasks != "" {
				var tasks any
				if err := yamlUnmarshal([]byte(tc.tasks), &tasks); err != nil {
					t.Fatal(err)
				}
				obj.Object["spec"].(map[string]any)["tasks"] = tasks
			}
			if !c.HookEnabled(obj.GroupVersionKind(), interpreter.InterpretComponent) {
				t.Fatal("no component interpretation for a Volcano Job")
			}
			got, err := c.GetComponents(obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("components (-want +got):\n%s", diff)
			}
		})
	}
	if c.HookEnabled(object(t, observedVolcanoJob).GroupVersionKind(), interpreter.InterpretReplica) {
		t.Error("a Volcano Job has replicas to interpret; Karmada interprets only its components")
	}
}

func TestVolcanoJobHealth(t *testing.T) {
	c := shipped(t)
	for phase, want := range map[string]workv1alpha2.ResourceHealth{
		"Pending": workv1alpha2.ResourceHealthy, "Running": workv1alpha2.ResourceHealthy, "Completed": workv1alpha2.ResourceHealthy,
		"Aborted": workv1alpha2.ResourceHealthy, "Terminated": workv1alpha2.ResourceHealthy, "Restarting": workv1alpha2.ResourceHealthy,
		"Failed": workv1alpha2.ResourceUnhealthy, "": workv1alpha2.ResourceUnhealthy,
	} {
		obj := object(t, observedVolcanoJob)
		_ = unstructured.SetNestedField(obj.Object, phase, "status", "state", "phase")
		if got, err := c.InterpretHealth(obj); got != want || err != nil {
			t.Errorf("phase %q: health %s, %v; want %s", phase, got, err, want)
		}
	}
	obj := object(t, observedVolcanoJob)
	delete(obj.Object, "status")
	if got, _ := c.InterpretHealth(obj); got != workv1alpha2.ResourceUnhealthy {
		t.Errorf("no status: health %s", got)
	}
}

func TestVolcanoJobStatus(t *testing.T) {
	c := shipped(t)
	observed := object(t, observedVolcanoJob)
	st, err := c.ReflectStatus(observed)
	if err != nil {
		t.Fatal(err)
	}
	var reflected map[string]any
	if err := yamlUnmarshal(st.Raw, &reflected); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonRoundTrip(t, observed.Object["status"]), reflected); diff != "" {
		t.Errorf("reflected status (-want +got):\n%s", diff)
	}

	desired := object(t, observedVolcanoJob)
	delete(desired.Object, "status")
	for _, tc := range []struct {
		name  string
		items []workv1alpha2.AggregatedStatusItem
		want  string
	}{{
		name:  "no member reported a status",
		items: []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Applied: true}},
		want:  "null",
	}, {
		name:  "one member: its status without the zeros",
		items: items(string(st.Raw)),
		want: `{"conditions":[{"lastTransitionTime":"2025-09-29T10:57:03Z","status":"Pending"},{"lastTransitionTime":"2025-09-29T10:57:07Z","status":"Running"},{"lastTransitionTime":"2025-09-29T10:57:38Z","status":"Completed"}],
		        "minAvailable":3,"runningDuration":"35.688396584s","state":{"lastTransitionTime":"2025-09-29T10:57:38Z","phase":"Completed"},"succeeded":4,
		        "taskStatusCount":{"job-nginx1":{"phase":{"Succeeded":1}},"job-nginx2":{"phase":{"Succeeded":3}}},"version":1}`,
	}, {
		name: "counts summed, the newest version, the longest duration, task phases merged",
		items: items(`{"pending":1,"running":1,"minAvailable":2,"runningDuration":"100s","version":1,"state":{"phase":"Running"},"taskStatusCount":{"t":{"phase":{"Running":2,"Succeeded":1}}},"controlledResources":{"pod-1":"uid-1"}}`,
			`{"running":2,"succeeded":1,"minAvailable":3,"retryCount":1,"runningDuration":"2m30s","version":2,"state":{"phase":"Running"},"taskStatusCount":{"t":{"phase":{"Running":1}},"u":{"phase":{"Pending":1}}},"controlledResources":{"pod-2":"uid-2"}}`),
		want: `{"pending":1,"running":3,"succeeded":1,"minAvailable":5,"retryCount":1,"runningDuration":"2m30s","version":2,"state":{"phase":"Running"},
		        "taskStatusCount":{"t":{"phase":{"Running":3,"Succeeded":1}},"u":{"phase":{"Pending":1}}},"controlledResources":{"pod-1":"uid-1","pod-2":"uid-2"}}`,
	}, {
		name:  "durations below a second and in hours",
		items: items(`{"runningDuration":"1h0m2s","version":1}`, `{"runningDuration":"950ms","version":1}`),
		want:  `{"runningDuration":"1h0m2s","version":1}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			agg, err := c.AggregateStatus(desired, tc.items)
			if err != nil {
				t.Fatal(err)
			}
			var want any
			if err := yamlUnmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, jsonRoundTrip(t, agg.Object["status"])); diff != "" {
				t.Errorf("aggregated status (-want +got):\n%s", diff)
			}
		})
	}
}
