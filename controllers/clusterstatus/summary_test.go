package clusterstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func req(cpu, mem string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}
}

func TestPodRequests(t *testing.T) {
	t.Parallel()
	p := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:     []corev1.Container{{Resources: req("100m", "64Mi")}, {Resources: req("200m", "64Mi")}},
		InitContainers: []corev1.Container{{Resources: req("500m", "16Mi")}},
		Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
	}}
	got := podRequests(p)
	// cpu: max(100m+200m, 500m) + 10m overhead; memory: max(128Mi, 16Mi).
	if cpu := got.Cpu().MilliValue(); cpu != 510 {
		t.Errorf("cpu %dm, want 510m", cpu)
	}
	if mem := got.Memory().String(); mem != "128Mi" {
		t.Errorf("memory %s, want 128Mi", mem)
	}
}

func TestSummaries(t *testing.T) {
	t.Parallel()
	nodes := cache.NewStore(cache.MetaNamespaceKeyFunc)
	pods := cache.NewStore(cache.MetaNamespaceKeyFunc)
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")}
	for i, ready := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse} {
		n, _ := trimNode(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: string(rune('a' + i))}, Status: corev1.NodeStatus{Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: ready}}}})
		_ = nodes.Add(n)
	}
	for i, p := range []corev1.Pod{
		{Spec: corev1.PodSpec{NodeName: "a", Containers: []corev1.Container{{Resources: req("1", "1Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{Spec: corev1.PodSpec{NodeName: "a", Containers: []corev1.Container{{Resources: req("2", "1Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
		{Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: req("3", "2Gi")}}}, Status: corev1.PodStatus{Phase: corev1.PodPending}},
	} {
		p.Name = string(rune('p' + i))
		tp, _ := trimPod(&p)
		_ = pods.Add(tp)
	}
	m := &memberCache{nodes: fakeInformer{nodes}, pods: fakeInformer{pods}}
	ns, rs := m.summaries(nil)
	if ns.TotalNum != 2 || ns.ReadyNum != 1 {
		t.Errorf("node summary %+v, want 1 of 2 ready", ns)
	}
	if cpu := rs.Allocatable.Cpu().String(); cpu != "64" {
		t.Errorf("allocatable cpu %s, want 64", cpu)
	}
	if cpu, pods := rs.Allocated.Cpu().String(), rs.Allocated.Pods().Value(); cpu != "1" || pods != 1 {
		t.Errorf("allocated cpu %s pods %d, want 1 and 1 (succeeded pods do not count)", cpu, pods)
	}
	if cpu, mem := rs.Allocating.Cpu().String(), rs.Allocating.Memory().String(); cpu != "3" || mem != "2Gi" {
		t.Errorf("allocating %s %s, want 3 and 2Gi", cpu, mem)
	}
}

// fakeInformer serves a store as an informer's store.
type fakeInformer struct{ store cache.Store }

func (f fakeInformer) GetStore() cache.Store { return f.store }
func (f fakeInformer) HasSynced() bool       { return true }

// syncingInformer lists after a delay.
type syncingInformer struct {
	fakeInformer
	at time.Time
}

func (f syncingInformer) HasSynced() bool { return !time.Now().Before(f.at) }

// A status is written only once the member's caches have listed: until
// then the cluster is looked at again, and after the timeout it is late.
func TestListed(t *testing.T) {
	t.Parallel()
	store := fakeInformer{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	start := time.Now()
	soon := &memberCache{nodes: store, pods: syncingInformer{store, start.Add(300 * time.Millisecond)}, started: start}
	if synced, late := soon.listed(start, 5*time.Second); synced || late {
		t.Fatalf("caches that list after 300ms: synced %v late %v at once", synced, late)
	}
	time.Sleep(300 * time.Millisecond)
	if synced, late := soon.listed(time.Now(), 5*time.Second); !synced || late {
		t.Fatalf("caches that list after 300ms: synced %v late %v after it", synced, late)
	}
	never := &memberCache{nodes: store, pods: syncingInformer{store, start.Add(time.Hour)}, started: start}
	if _, late := never.listed(start.Add(299*time.Millisecond), 300*time.Millisecond); late {
		t.Fatal("caches that never list: late before the timeout")
	}
	if synced, late := never.listed(start.Add(300*time.Millisecond), 300*time.Millisecond); synced || !late {
		t.Fatalf("caches that never list: synced %v late %v after the timeout", synced, late)
	}
}
