package cluster

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
)

func TestStale(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	renewed := func(ago time.Duration) *coordinationv1.Lease {
		rt := metav1.NewMicroTime(now.Add(-ago))
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &rt}}
	}
	tests := []struct {
		name  string
		lease *coordinationv1.Lease
		since time.Duration // since the last Ready transition
		want  bool
	}{
		{"fresh lease", renewed(5 * time.Second), time.Hour, false},
		{"stale lease", renewed(41 * time.Second), time.Hour, true},
		{"no lease, recent transition", nil, 10 * time.Second, false},
		{"no lease, old transition", nil, time.Minute, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Stale(tc.lease, now.Add(-tc.since), now, 40*time.Second); got != tc.want {
				t.Errorf("Stale = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSyncTaints(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ready  metav1.ConditionStatus
		taints []corev1.Taint
		want   []string
	}{
		{"not ready", metav1.ConditionFalse, nil, []string{clusterv1alpha1.TaintClusterNotReady}},
		{"unknown", metav1.ConditionUnknown, []corev1.Taint{{Key: clusterv1alpha1.TaintClusterNotReady, Effect: corev1.TaintEffectNoSchedule}}, []string{clusterv1alpha1.TaintClusterUnreachable}},
		{"ready keeps user taints", metav1.ConditionTrue, []corev1.Taint{
			{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule},
			{Key: clusterv1alpha1.TaintClusterUnreachable, Effect: corev1.TaintEffectNoSchedule},
		}, []string{"dedicated"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, Taints: tc.taints},
				Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: tc.ready, Reason: "R", LastTransitionTime: metav1.Now()}}}}
			cs := fake.NewClientset(c)
			ctrl := &Controller{client: cs, now: time.Now}
			if err := ctrl.syncTaints(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			got, err := cs.ClusterV1alpha1().Clusters().Get(context.Background(), "m1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, tt := range got.Spec.Taints {
				keys = append(keys, tt.Key)
			}
			if len(keys) != len(tc.want) {
				t.Fatalf("taints %v, want %v", keys, tc.want)
			}
			for i := range keys {
				if keys[i] != tc.want[i] {
					t.Fatalf("taints %v, want %v", keys, tc.want)
				}
			}
		})
	}
}
