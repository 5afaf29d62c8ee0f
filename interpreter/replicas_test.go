package interpreter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestGetReplicas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		obj      string
		want     int32
		wantReq  *workv1alpha2.ReplicaRequirements
		quota    bool
		wantsErr bool
	}{
		{
			name: "deployment nil replicas is 0, no requirements",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  template:
    spec:
      containers: [{name: c, image: i}]`,
			want: 0,
		},
		{
			name: "deployment effective requests: max(sum containers, init) + overhead",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  replicas: 3
  template:
    spec:
      overhead: {cpu: 100m}
      initContainers:
      - {name: i1, image: i, resources: {requests: {cpu: "2", memory: 64Mi}}}
      - {name: i2, image: i, resources: {requests: {memory: 1Gi}}}
      containers:
      - {name: a, image: i, resources: {requests: {cpu: 500m, memory: 256Mi}}}
      - {name: b, image: i, resources: {requests: {cpu: 250m, memory: 256Mi}}}`,
			want: 3,
			wantReq: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("2100m"),
				corev1.ResourceMemory: resource.MustParse("1Gi"),
			}},
		},
		{
			name: "statefulset node claim from selector, tolerations, required affinity",
			obj: `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: s, namespace: ns}
spec:
  replicas: 2
  template:
    spec:
      nodeSelector: {zone: a}
      tolerations: [{key: k, operator: Exists}]
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms: [{matchExpressions: [{key: x, operator: In, values: ["1"]}]}]
      containers: [{name: c, image: i}]`,
			want: 2,
			wantReq: &workv1alpha2.ReplicaRequirements{NodeClaim: &workv1alpha2.NodeClaim{
				NodeSelector: map[string]string{"zone": "a"},
				Tolerations:  []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}},
				HardNodeAffinity: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "x", Operator: corev1.NodeSelectorOpIn, Values: []string{"1"}}},
				}}},
			}},
		},
		{
			name: "pod-level requests, limits ignored, resource claims read through the typed path",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  replicas: 2
  template:
    spec:
      resources: {requests: {cpu: "3"}}
      containers:
      - {name: a, image: i, resources: {requests: {cpu: 500m, memory: 64Mi}, limits: {cpu: "4", memory: 1Gi}}}
      - {name: b, image: i, resources: {limits: {memory: 2Gi}, claims: [{name: gpu}]}}`,
			want: 2,
			wantReq: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{
				corev1.ResourceCPU:    resource.MustParse("3"),
				corev1.ResourceMemory: resource.MustParse("64Mi"),
			}},
		},
		{
			name: "a malformed request is an error",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  template:
    spec:
      containers: [{name: a, image: i, resources: {requests: {cpu: lots}}}]`,
			wantsErr: true,
		},
		{
			name: "preferred affinity alone gives no claim",
			obj: `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: r, namespace: ns}
spec:
  replicas: 4
  template:
    spec:
      affinity:
        nodeAffinity:
          preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: x, operator: Exists}]}}]
      containers: [{name: c, image: i}]`,
			want: 4,
		},
		{
			name: "quota estimate adds namespace and priority class",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  replicas: 1
  template:
    spec:
      priorityClassName: high
      containers: [{name: c, image: i, resources: {requests: {cpu: 1}}}]`,
			quota: true,
			want:  1,
			wantReq: &workv1alpha2.ReplicaRequirements{
				ResourceRequest:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Namespace:         "ns",
				PriorityClassName: "high",
			},
		},
		{
			name: "without quota estimate neither namespace nor priority class",
			obj: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec:
  replicas: 1
  template:
    spec:
      priorityClassName: high
      containers: [{name: c, image: i, resources: {requests: {cpu: 1}}}]`,
			want:    1,
			wantReq: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		},
		{
			name: "job parallelism capped by completions",
			obj: `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  parallelism: 5
  completions: 3
  template: {spec: {containers: [{name: c, image: i}]}}`,
			want: 3,
		},
		{
			name: "job parallelism below completions",
			obj: `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  parallelism: 2
  completions: 3
  template: {spec: {containers: [{name: c, image: i}]}}`,
			want: 2,
		},
		{
			name: "job nil parallelism is 0",
			obj: `apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  completions: 3
  template: {spec: {containers: [{name: c, image: i}]}}`,
			want: 0,
		},
		{
			name: "pod is one replica with its own requests",
			obj: `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec:
  containers: [{name: c, image: i, resources: {requests: {memory: 1Gi}}}]`,
			want:    1,
			wantReq: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		},
		{
			name: "daemonset has no replica hook",
			obj: `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: d, namespace: ns}`,
			wantsErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := QuotaScoped{Interpreter: NewNative(), Enabled: tc.quota}
			got, req, err := n.GetReplicas(obj(t, tc.obj))
			if (err != nil) != tc.wantsErr {
				t.Fatalf("err = %v, wantsErr %v", err, tc.wantsErr)
			}
			if got != tc.want {
				t.Errorf("replicas = %d, want %d", got, tc.want)
			}
			if diff := cmp.Diff(tc.wantReq, req, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("requirements (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodRequestsSidecar(t *testing.T) {
	t.Parallel()
	always := corev1.ContainerRestartPolicyAlways
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "sidecar", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}},
		},
		Containers: []corev1.Container{
			{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m")}}},
		},
	}
	got := PodRequests(&corev1.Pod{Spec: *spec})
	if q := got[corev1.ResourceCPU]; q.MilliValue() != 500 {
		t.Errorf("cpu = %s, want 500m", q.String())
	}
}

func TestReviseReplica(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		obj   string
		path  []string
		value int64
	}{
		{"deployment", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}", []string{"spec", "replicas"}, 7},
		{"replicaset", "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: d}\nspec: {}", []string{"spec", "replicas"}, 2},
		{"statefulset", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: d}\nspec: {replicas: 9}", []string{"spec", "replicas"}, 0},
		{"job sets parallelism", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: d}\nspec: {parallelism: 1, completions: 5}", []string{"spec", "parallelism"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := obj(t, tc.obj)
			before := in.DeepCopy()
			out, err := NewNative().ReviseReplica(in, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			got, found, err := nestedInt64(out, tc.path...)
			if err != nil || !found || got != tc.value {
				t.Errorf("%v = %d (found %v, err %v), want %d", tc.path, got, found, err, tc.value)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("input modified:\n%s", diff)
			}
		})
	}
}

// QuotaScoped fills the namespace of any interpretation's requirements
// (Lua, webhook) and keeps one the interpretation named; off, it drops both.
func TestScopeRequirements(t *testing.T) {
	t.Parallel()
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	for _, tc := range []struct {
		name    string
		in      workv1alpha2.ReplicaRequirements
		enabled bool
		want    workv1alpha2.ReplicaRequirements
	}{
		{name: "namespace from the template", in: workv1alpha2.ReplicaRequirements{ResourceRequest: cpu}, enabled: true,
			want: workv1alpha2.ReplicaRequirements{ResourceRequest: cpu, Namespace: "tpl"}},
		{name: "a named namespace is kept", in: workv1alpha2.ReplicaRequirements{Namespace: "other", PriorityClassName: "high"}, enabled: true,
			want: workv1alpha2.ReplicaRequirements{Namespace: "other", PriorityClassName: "high"}},
		{name: "off drops both", in: workv1alpha2.ReplicaRequirements{ResourceRequest: cpu, Namespace: "other", PriorityClassName: "high"},
			want: workv1alpha2.ReplicaRequirements{ResourceRequest: cpu}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			got := ScopeRequirements(&in, "tpl", tc.enabled)
			if diff := cmp.Diff(tc.want, *got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.in, in, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("the input changed (-before +after):\n%s", diff)
			}
		})
	}
}
