package member

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrim(t *testing.T) {
	t.Parallel()
	always := corev1.ContainerRestartPolicyAlways
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	meta := metav1.ObjectMeta{Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "7", Labels: map[string]string{"a": "b"}}
	fullMeta := *meta.DeepCopy()
	fullMeta.Annotations = map[string]string{"big": "annotation"}
	fullMeta.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m"}}
	fullMeta.OwnerReferences = []metav1.OwnerReference{{Name: "owner"}}
	container := func(name string, restart *corev1.ContainerRestartPolicy) corev1.Container {
		return corev1.Container{Name: name, Image: "image", RestartPolicy: restart, Env: []corev1.EnvVar{{Name: "E"}},
			Resources: corev1.ResourceRequirements{Requests: cpu, Limits: cpu}}
	}
	taints := []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	selector := &corev1.ScopeSelector{MatchExpressions: []corev1.ScopedResourceSelectorRequirement{
		{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: corev1.ScopeSelectorOpExists}}}
	tests := []struct {
		name    string
		in, out any
	}{
		{
			name: "pod",
			in: &corev1.Pod{ObjectMeta: fullMeta, Spec: corev1.PodSpec{
				NodeName:       "n1",
				Containers:     []corev1.Container{container("app", nil)},
				InitContainers: []corev1.Container{container("init", nil), container("sidecar", &always)},
				Overhead:       cpu,
				Resources:      &corev1.ResourceRequirements{Requests: cpu},
				NodeSelector:   map[string]string{"zone": "a"},
				Volumes:        []corev1.Volume{{Name: "v"}},
			}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1",
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app"}}}},
			// Pod-level requests (1 cpu) plus the overhead (1 cpu) make the
			// pod's; the app container and the sidecar are what HPA reads.
			out: &Pod{Namespace: "ns", Name: "x", ResourceVersion: "7", NodeName: "n1", Phase: corev1.PodRunning,
				labels: &map[string]string{"a": "b"},
				shape: &podShape{
					containers: []ContainerRequests{{Name: "app", Requests: map[corev1.ResourceName]int64{"cpu": 1000}}, {Name: "sidecar", Requests: map[corev1.ResourceName]int64{"cpu": 1000}}},
					podLevel:   map[corev1.ResourceName]int64{"cpu": 2000},
					usage:      map[corev1.ResourceName]int64{"cpu": 2000},
				}},
		},
		{
			name: "node",
			in: &corev1.Node{ObjectMeta: fullMeta,
				Spec: corev1.NodeSpec{Unschedulable: true, Taints: taints, PodCIDR: "10.0.0.0/24", ProviderID: "p"},
				Status: corev1.NodeStatus{Allocatable: cpu, Capacity: cpu,
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
					Images:     []corev1.ContainerImage{{Names: []string{"image"}}}}},
			out: &corev1.Node{ObjectMeta: meta,
				Spec: corev1.NodeSpec{Unschedulable: true, Taints: taints},
				Status: corev1.NodeStatus{Allocatable: cpu, Capacity: cpu,
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}},
		},
		{
			name: "resource quota",
			in: &corev1.ResourceQuota{ObjectMeta: fullMeta,
				Spec:   corev1.ResourceQuotaSpec{Hard: cpu, Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}, ScopeSelector: selector},
				Status: corev1.ResourceQuotaStatus{Hard: cpu, Used: cpu}},
			out: &corev1.ResourceQuota{ObjectMeta: meta,
				Spec:   corev1.ResourceQuotaSpec{Hard: cpu, Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}, ScopeSelector: selector},
				Status: corev1.ResourceQuotaStatus{Hard: cpu, Used: cpu}},
		},
		{name: "other kinds pass", in: &corev1.ConfigMap{ObjectMeta: fullMeta}, out: &corev1.ConfigMap{ObjectMeta: fullMeta}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Trim(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.out, got, cmp.AllowUnexported(Pod{}, podShape{})); diff != "" {
				t.Errorf("Trim() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
