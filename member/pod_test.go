package member

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pods of one workload share one copy of their labels and requests;
// a pod with other labels or requests gets its own.
func TestCompactPodInterns(t *testing.T) {
	t.Parallel()
	web := func(name, cpu string, lbls map[string]string) *corev1.Pod {
		p := testPod(name, "n1", corev1.PodRunning, "cpu", cpu, "memory", "64Mi")
		p.Labels = lbls
		return p
	}
	a := NewPod(web("a", "100m", map[string]string{"app": "web", "hash": "1"}))
	b := NewPod(web("b", "100m", map[string]string{"hash": "1", "app": "web"}))
	c := NewPod(web("c", "200m", map[string]string{"app": "web", "hash": "2"}))
	if a.labels != b.labels || a.shape != b.shape {
		t.Error("two pods of one workload hold separate labels or requests")
	}
	if a.labels == c.labels || a.shape == c.shape {
		t.Error("pods with other labels and requests share a's")
	}
	if got := c.Containers(); len(got) != 1 || got[0].Requests[corev1.ResourceCPU] != 200 || got[0].Requests[corev1.ResourceMemory] != 64<<20*1000 {
		t.Errorf("containers %+v", got)
	}
	if c.shape.usage[corev1.ResourceCPU] != 200 || c.shape.usage[corev1.ResourceMemory] != 64<<20 {
		t.Errorf("usage %v, want 200 millicores and 64Mi in bytes", c.shape.usage)
	}
	if a.PodLevelRequests() != nil {
		t.Error("pod-level requests of a pod that sets none")
	}
}

func TestCompactPodStatus(t *testing.T) {
	t.Parallel()
	started := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ready := metav1.NewTime(started.Add(time.Minute))
	p := testPod("p", "n1", corev1.PodRunning, "cpu", "1")
	p.DeletionTimestamp = &ready
	p.Status.StartTime = &started
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: ready}}
	c := NewPod(p)
	if !c.StartTime().Equal(started.Time) || !c.ReadyTransition().Equal(ready.Time) || c.Ready != corev1.ConditionFalse || !c.Deleting {
		t.Errorf("start %v ready %s at %v deleting %t", c.StartTime(), c.Ready, c.ReadyTransition(), c.Deleting)
	}
	if m := c.GetObjectMeta(); m.GetNamespace() != "ns" || m.GetName() != "p" {
		t.Errorf("object meta %s/%s", m.GetNamespace(), m.GetName())
	}
	if !c.UnschedulableSince().IsZero() {
		t.Errorf("a scheduled pod unschedulable since %v", c.UnschedulableSince())
	}
	if z := NewPod(testPod("q", "", corev1.PodPending)); !z.StartTime().IsZero() || !z.ReadyTransition().IsZero() || z.Ready != "" || !z.UnschedulableSince().IsZero() {
		t.Errorf("a pending pod: start %v ready %q at %v unschedulable since %v", z.StartTime(), z.Ready, z.ReadyTransition(), z.UnschedulableSince())
	}
	// Only the scheduler's verdict that no node fits counts: a pod
	// waiting for its scheduling gates is not unschedulable.
	for reason, want := range map[string]time.Time{corev1.PodReasonUnschedulable: started.Time, corev1.PodReasonSchedulingGated: {}} {
		u := testPod("u", "", corev1.PodPending)
		u.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: reason, LastTransitionTime: started}}
		if got := NewPod(u).UnschedulableSince(); !got.Equal(want) {
			t.Errorf("PodScheduled False (%s): unschedulable since %v, want %v", reason, got, want)
		}
	}
}
