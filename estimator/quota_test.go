package estimator

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// quota is a ResourceQuota whose status holds hard and used, given as
// name/quantity pairs.
func quota(hard, used []string) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Spec:       corev1.ResourceQuotaSpec{Hard: list(hard...)},
		Status:     corev1.ResourceQuotaStatus{Hard: list(hard...), Used: list(used...)},
	}
}

func scoped(q *corev1.ResourceQuota, scopes []corev1.ResourceQuotaScope, selector ...corev1.ScopedResourceSelectorRequirement) *corev1.ResourceQuota {
	q.Spec.Scopes = scopes
	if selector != nil {
		q.Spec.ScopeSelector = &corev1.ScopeSelector{MatchExpressions: selector}
	}
	return q
}

func withPriority(req *workv1alpha2.ReplicaRequirements, class string) *workv1alpha2.ReplicaRequirements {
	req.PriorityClassName = class
	return req
}

func priorityIn(op corev1.ScopeSelectorOperator, values ...string) corev1.ScopedResourceSelectorRequirement {
	return corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopePriorityClass, Operator: op, Values: values}
}

func TestQuotaReplicas(t *testing.T) {
	t.Parallel()
	cpuQuota := func() *corev1.ResourceQuota { return quota([]string{"cpu", "1"}, []string{"cpu", "200m"}) }
	tests := []struct {
		name   string
		quotas []*corev1.ResourceQuota
		req    *workv1alpha2.ReplicaRequirements
		want   int64
		wantOK bool
	}{
		{name: "no quotas", req: requests("cpu", "1")},
		{name: "cpu", quotas: []*corev1.ResourceQuota{cpuQuota()}, req: requests("cpu", "200m"), want: 4, wantOK: true},
		{
			name:   "requests.cpu and cpu both limit",
			quotas: []*corev1.ResourceQuota{quota([]string{"cpu", "10", "requests.cpu", "1"}, []string{"cpu", "0", "requests.cpu", "0"})},
			req:    requests("cpu", "300m"),
			want:   3, wantOK: true,
		},
		{
			name:   "memory",
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.memory", "4Mi"}, []string{"requests.memory", "1Mi"})},
			req:    requests("memory", "2Mi"),
			want:   1, wantOK: true,
		},
		{
			name:   "extended resource, bare and prefixed",
			quotas: []*corev1.ResourceQuota{quota([]string{"nvidia.com/gpu", "5", "requests.example.com/foo", "10"}, []string{"nvidia.com/gpu", "2", "requests.example.com/foo", "0"})},
			req:    requests("nvidia.com/gpu", "1", "example.com/foo", "5"),
			want:   2, wantOK: true,
		},
		{
			name:   "ephemeral-storage and hugepages",
			quotas: []*corev1.ResourceQuota{quota([]string{"requests.ephemeral-storage", "10Gi", "requests.hugepages-2Mi", "20Mi"}, []string{"requests.ephemeral-storage", "1Gi", "requests.hugepages-2Mi", "0"})},
			req:    requests("ephemeral-storage", "1Gi", "hugepages-2Mi", "4Mi"),
			want:   5, wantOK: true,
		},
		{
			name:   "pods, with no resource request",
			quotas: []*corev1.ResourceQuota{quota([]string{"pods", "10", "cpu", "1"}, []string{"pods", "7", "cpu", "0"})},
			req:    nil,
			want:   3, wantOK: true,
		},
		{
			name:   "count/pods",
			quotas: []*corev1.ResourceQuota{quota([]string{"count/pods", "2"}, []string{"count/pods", "0"})},
			req:    requests("cpu", "1"),
			want:   2, wantOK: true,
		},
		{
			name:   "a resource the replica does not request does not limit it",
			quotas: []*corev1.ResourceQuota{cpuQuota()},
			req:    requests("memory", "1Gi", "ephemeral-storage", "1Gi"),
		},
		{
			name:   "a zero request does not limit",
			quotas: []*corev1.ResourceQuota{cpuQuota()},
			req:    requests("cpu", "0"),
		},
		{
			name: "limits, storage and object counts are not what a replica consumes",
			quotas: []*corev1.ResourceQuota{quota(
				[]string{"limits.cpu", "1", "limits.memory", "1Gi", "requests.storage", "1Gi", "count/services", "1", "services", "1", "count/deployments.apps", "1"},
				[]string{"limits.cpu", "1", "limits.memory", "1Gi", "requests.storage", "1Gi", "count/services", "1", "services", "1", "count/deployments.apps", "1"},
			)},
			req: requests("cpu", "1", "memory", "1Gi", "storage", "1Gi", "count/services", "1", "services", "1"),
		},
		{
			name:   "an entry not counted yet is skipped",
			quotas: []*corev1.ResourceQuota{quota([]string{"cpu", "1", "pods", "3"}, nil)},
			req:    requests("cpu", "100m"),
		},
		{
			name:   "over-used quota allows none",
			quotas: []*corev1.ResourceQuota{quota([]string{"cpu", "1"}, []string{"cpu", "2"})},
			req:    requests("cpu", "100m"),
			want:   0, wantOK: true,
		},
		{
			name:   "exhausted quota allows none",
			quotas: []*corev1.ResourceQuota{cpuQuota()},
			req:    requests("cpu", "2"),
			want:   0, wantOK: true,
		},
		{
			name: "minimum over quotas",
			quotas: []*corev1.ResourceQuota{
				quota([]string{"cpu", "1"}, []string{"cpu", "200m"}),
				quota([]string{"memory", "3Mi"}, []string{"memory", "1Mi"}),
			},
			req:  requests("cpu", "200m", "memory", "1Mi"),
			want: 2, wantOK: true,
		},
		{
			name:   "PriorityClass In: matching class",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), nil, priorityIn(corev1.ScopeSelectorOpIn, "foo"))},
			req:    withPriority(requests("cpu", "200m"), "foo"),
			want:   4, wantOK: true,
		},
		{
			name:   "PriorityClass In: another class",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), nil, priorityIn(corev1.ScopeSelectorOpIn, "foo"))},
			req:    withPriority(requests("cpu", "200m"), "bar"),
		},
		{
			name:   "PriorityClass In: no class",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), nil, priorityIn(corev1.ScopeSelectorOpIn, "foo"))},
			req:    requests("cpu", "200m"),
		},
		{
			name:   "PriorityClass NotIn: no class matches",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), nil, priorityIn(corev1.ScopeSelectorOpNotIn, "foo"))},
			req:    requests("cpu", "200m"),
			want:   4, wantOK: true,
		},
		{
			name:   "PriorityClass DoesNotExist",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), nil, priorityIn(corev1.ScopeSelectorOpDoesNotExist))},
			req:    withPriority(requests("cpu", "200m"), "foo"),
		},
		{
			name:   "spec.scopes PriorityClass is Exists",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopePriorityClass})},
			req:    withPriority(requests("cpu", "200m"), "foo"),
			want:   4, wantOK: true,
		},
		{
			name:   "spec.scopes PriorityClass without a class",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopePriorityClass})},
			req:    requests("cpu", "200m"),
		},
		{
			name: "scopes a replica cannot be matched against leave the quota out",
			quotas: []*corev1.ResourceQuota{
				scoped(cpuQuota(), []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}),
				scoped(cpuQuota(), []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotBestEffort}),
				scoped(cpuQuota(), nil,
					corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeTerminating, Operator: corev1.ScopeSelectorOpExists},
					corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeBestEffort, Operator: corev1.ScopeSelectorOpExists},
					corev1.ScopedResourceSelectorRequirement{ScopeName: corev1.ResourceQuotaScopeCrossNamespacePodAffinity, Operator: corev1.ScopeSelectorOpExists},
				),
			},
			req: withPriority(requests("cpu", "200m"), "foo"),
		},
		{
			name: "one matching scope is enough (Karmada)",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating},
				priorityIn(corev1.ScopeSelectorOpIn, "foo"), priorityIn(corev1.ScopeSelectorOpIn, "bar"))},
			req:  withPriority(requests("cpu", "200m"), "foo"),
			want: 4, wantOK: true,
		},
		{
			name:   "an empty scope selector scopes nothing",
			quotas: []*corev1.ResourceQuota{scoped(cpuQuota(), nil, []corev1.ScopedResourceSelectorRequirement{}...)},
			req:    requests("cpu", "200m"),
			want:   4, wantOK: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := QuotaReplicas(tc.quotas, tc.req)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("QuotaReplicas() = %d, %t, want %d, %t", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestMaxReplicas(t *testing.T) {
	t.Parallel()
	nodes := []*corev1.Node{readyNode("n1", "cpu", "4", "pods", "110"), readyNode("n2", "cpu", "4", "pods", "110")}
	pods := []*corev1.Pod{boundPod("n1", "cpu", "1")}
	tests := []struct {
		name   string
		quotas []*corev1.ResourceQuota
		req    *workv1alpha2.ReplicaRequirements
		want   int64
	}{
		{name: "nodes only", req: requests("cpu", "1"), want: 3 + 4},
		{name: "quota lower", quotas: []*corev1.ResourceQuota{quota([]string{"cpu", "5"}, []string{"cpu", "3"})}, req: requests("cpu", "1"), want: 2},
		{name: "quota higher", quotas: []*corev1.ResourceQuota{quota([]string{"cpu", "50"}, []string{"cpu", "3"})}, req: requests("cpu", "1"), want: 7},
		{name: "quota limiting nothing requested", quotas: []*corev1.ResourceQuota{quota([]string{"memory", "1"}, []string{"memory", "1"})}, req: requests("cpu", "1"), want: 7},
		{name: "pods quota without requests", quotas: []*corev1.ResourceQuota{quota([]string{"pods", "5"}, []string{"pods", "0"})}, want: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := MaxReplicas(nodes, pods, tc.quotas, tc.req); got != tc.want {
				t.Errorf("MaxReplicas() = %d, want %d", got, tc.want)
			}
		})
	}
}
