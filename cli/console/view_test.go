package console

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

func TestClusterRow(t *testing.T) {
	rl := func(cpu, mem, pods string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourcePods: resource.MustParse(pods)}
	}
	for _, tc := range []struct {
		name string
		c    clusterv1alpha1.Cluster
		want ClusterRow
	}{
		{
			name: "a Ready push member with its resources",
			c: clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"},
				Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, Taints: []corev1.Taint{{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}}},
				Status: clusterv1alpha1.ClusterStatus{KubernetesVersion: "v1.36.3",
					Conditions:      []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ClusterReady", Message: "cluster is healthy and ready to accept workloads"}},
					NodeSummary:     &clusterv1alpha1.NodeSummary{TotalNum: 3, ReadyNum: 2},
					ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: rl("4", "8Gi", "110"), Allocated: rl("1500m", "2Gi", "11")}}},
			want: ClusterRow{Name: "member1", Mode: "Push", Ready: "True", Health: healthy, Taints: []string{"team=a:NoSchedule"}, Version: "v1.36.3", Nodes: "2/3",
				CPU: Bar{Used: "1.5", Total: "4", Percent: 37}, Mem: Bar{Used: "2 GiB", Total: "8 GiB", Percent: 25}, Pods: Bar{Used: "11", Total: "110", Percent: 10}},
		},
		{
			name: "a pull member not Ready says why",
			c: clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull},
				Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "ClusterNotReachable", Message: "cluster is not reachable"}}}},
			want: ClusterRow{Name: "member3", Mode: "Pull", Ready: "False", Health: unhealthy, Why: "ClusterNotReachable: cluster is not reachable"},
		},
		{
			name: "no status yet: Unknown, push by default",
			c:    clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "new"}},
			want: ClusterRow{Name: "new", Mode: "Push", Ready: "Unknown", Health: unknown},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, clusterRow(&tc.c)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestWorkloadRowAndMatrix(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "shop", Name: "web-deployment", Annotations: map[string]string{policyv1alpha1.PropagationPolicyNameAnnotation: "web"}}
	spec := &workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{Kind: "Deployment", Namespace: "shop", Name: "web"}, Replicas: 3,
		Clusters: []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 2}, {Name: "member1", Replicas: 1}}}
	status := &workv1alpha2.ResourceBindingStatus{
		Conditions: []metav1.Condition{{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue}},
		AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "member1", Applied: true, Health: workv1alpha2.ResourceHealthy},
			{ClusterName: "member2", Applied: true, Health: workv1alpha2.ResourceHealthy},
		}}
	row := workloadRow(meta, spec, status)
	want := WorkloadRow{Binding: "shop/web-deployment", Kind: "Deployment", Namespace: "shop", Name: "web", Policy: "web", Replicas: 3, Health: healthy,
		Cells: []Cell{{Cluster: "member2", Replicas: 2, Health: healthy, Applied: true}, {Cluster: "member1", Replicas: 1, Health: healthy, Applied: true}}}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("healthy row (-want +got)\n%s", diff)
	}

	// member2 refused the manifest: the row and its cell are unhealthy.
	status.AggregatedStatus[1] = workv1alpha2.AggregatedStatusItem{ClusterName: "member2", Applied: false, AppliedMessage: "admission webhook denied"}
	status.Conditions[0].Status = metav1.ConditionFalse
	row = workloadRow(meta, spec, status)
	if row.Health != unhealthy || row.Cells[0].Health != unhealthy || row.Cells[0].Message != "admission webhook denied" || row.Status != "not applied everywhere yet" {
		t.Errorf("refused in member2: %+v", row)
	}

	// Not scheduled, with the scheduler's reason.
	unscheduled := workloadRow(meta, &workv1alpha2.ResourceBindingSpec{Resource: spec.Resource},
		&workv1alpha2.ResourceBindingStatus{Conditions: []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse, Message: "0/3 clusters are available"}}})
	if unscheduled.Health != unhealthy || unscheduled.Status != "not scheduled: 0/3 clusters are available" {
		t.Errorf("unscheduled: %+v", unscheduled)
	}

	// The matrix: the fleet's clusters sorted, plus one only a workload
	// names; a cell per cluster, empty where it does not run.
	m := matrix([]string{"member3", "member1", "member2"}, []WorkloadRow{row, {Binding: "shop/db", Cells: []Cell{{Cluster: "old", Replicas: 1}}}})
	if diff := cmp.Diff([]string{"member1", "member2", "member3", "old"}, m.Clusters); diff != "" {
		t.Errorf("columns (-want +got)\n%s", diff)
	}
	got := func(r MatrixRow) []string {
		var out []string
		for _, c := range r.Cells {
			if c == nil {
				out = append(out, "-")
			} else {
				out = append(out, c.Cluster)
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{"member1", "member2", "-", "-"}, got(m.Rows[0])); diff != "" {
		t.Errorf("web's cells (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"-", "-", "-", "old"}, got(m.Rows[1])); diff != "" {
		t.Errorf("db's cells (-want +got)\n%s", diff)
	}
}

func TestResourceOf(t *testing.T) {
	list := &metav1.APIResourceList{GroupVersion: "networking.k8s.io/v1", APIResources: []metav1.APIResource{
		{Name: "ingresses/status", Kind: "Ingress", Namespaced: true},
		{Name: "ingresses", Kind: "Ingress", Namespaced: true},
		{Name: "ingressclasses", Kind: "IngressClass"},
		{Name: "networkpolicies", Kind: "NetworkPolicy", Namespaced: true},
	}}
	for _, tc := range []struct {
		kind, resource     string
		namespaced, served bool
	}{
		{"Ingress", "ingresses", true, true},
		{"IngressClass", "ingressclasses", false, true},
		{"NetworkPolicy", "networkpolicies", true, true},
		{"Gateway", "", false, false},
	} {
		resource, namespaced, ok := resourceOf(list, tc.kind)
		if resource != tc.resource || namespaced != tc.namespaced || ok != tc.served {
			t.Errorf("%s: %q namespaced %t served %t, want %q %t %t", tc.kind, resource, namespaced, ok, tc.resource, tc.namespaced, tc.served)
		}
	}
	if got, want := groupVersionPath("v1"), "/api/v1"; got != want {
		t.Errorf("groupVersionPath(v1) = %s, want %s", got, want)
	}
	if got, want := groupVersionPath("apps/v1"), "/apis/apps/v1"; got != want {
		t.Errorf("groupVersionPath(apps/v1) = %s, want %s", got, want)
	}
}
