package clusterstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func req(cpu, mem string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
}

func TestSummaries(t *testing.T) {
	t.Parallel()
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
	m := &staticInformers{listed: true}
	for i, ready := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse} {
		m.nodes = append(m.nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: string(rune('a' + i))}, Status: corev1.NodeStatus{Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: ready}}}})
	}
	for i, p := range []corev1.Pod{
		{Spec: corev1.PodSpec{NodeName: "a", Containers: []corev1.Container{{Resources: req("1", "1Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{Spec: corev1.PodSpec{NodeName: "a", Containers: []corev1.Container{{Resources: req("2", "1Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		// Bound to a node the member no longer lists: still allocated (Karmada counts every bound pod).
		{Spec: corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Resources: req("500m", "1Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: req("3", "2Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
	} {
		p.Name = string(rune('p' + i))
		m.pods = append(m.pods, &p)
	}
	models := []clusterv1alpha1.ResourceModel{
		{Grade: 0, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("0"), Max: resource.MustParse("32")}}},
		{Grade: 1, Ranges: []clusterv1alpha1.ResourceModelRange{{Name: corev1.ResourceCPU, Min: resource.MustParse("32"), Max: resource.MustParse("64")}}},
	}
	ns, rs, err := summaries(m, models)
	if err != nil {
		t.Fatal(err)
	}
	if ns.TotalNum != 2 || ns.ReadyNum != 1 {
		t.Errorf("node summary %+v, want 1 of 2 ready", ns)
	}
	if cpu := rs.Allocatable.Cpu().String(); cpu != "64" {
		t.Errorf("allocatable cpu %s, want 64", cpu)
	}
	if cpu, mem, pods := rs.Allocated.Cpu().String(), rs.Allocated.Memory().String(), rs.Allocated.Pods().Value(); cpu != "1500m" || mem != "2Gi" || pods != 2 {
		t.Errorf("allocated cpu %s memory %s pods %d, want 1500m, 2Gi and 2 (succeeded pods do not count)", cpu, mem, pods)
	}
	if cpu, mem, pods := rs.Allocating.Cpu().String(), rs.Allocating.Memory().String(), rs.Allocating.Pods().Value(); cpu != "3" || mem != "2Gi" || pods != 1 {
		t.Errorf("allocating %s %s %d, want 3, 2Gi and 1", cpu, mem, pods)
	}
	// a has 31 cpu free (grade 0), b 32 (grade 1).
	if len(rs.AllocatableModelings) != 2 || rs.AllocatableModelings[0].Count != 1 || rs.AllocatableModelings[1].Count != 1 {
		t.Errorf("modelings %+v, want one node in each grade", rs.AllocatableModelings)
	}
}

// A status is written only once the member's informers have listed: until
// then the cluster is looked at again, and after the timeout it is late.
func TestListed(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := &staticInformers{since: start}
	if synced, late := listed(m, start.Add(299*time.Millisecond), 300*time.Millisecond); synced || late {
		t.Fatalf("informers listing: synced %v late %v before the timeout", synced, late)
	}
	if synced, late := listed(m, start.Add(300*time.Millisecond), 300*time.Millisecond); synced || !late {
		t.Fatalf("informers never listing: synced %v late %v after the timeout", synced, late)
	}
	m.listed = true
	if synced, late := listed(m, start.Add(time.Hour), 300*time.Millisecond); !synced || late {
		t.Fatalf("informers listed: synced %v late %v", synced, late)
	}
}
