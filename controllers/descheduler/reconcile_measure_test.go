package descheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/failover"
	"github.com/flotilla-io/flotilla/member"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pod is a member pod of web: "ready", "running" (not Ready),
// "unschedulable" since the given time, or "pending" (not yet seen by the
// scheduler).
func pod(name, state string, since time.Time) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": "web"}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	switch state {
	case "ready", "running":
		p.Spec.NodeName, p.Status.Phase = "n1", corev1.PodRunning
		st := corev1.ConditionFalse
		if state == "ready" {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: st}}
	case "unschedulable":
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, LastTransitionTime: metav1.NewTime(since)}}
	}
	return p
}

func hubPodsOf(pods ...*corev1.Pod) []*member.Pod {
	out := make([]*member.Pod, 0, len(pods))
	for _, p := range pods {
		out = append(out, member.NewPod(p))
	}
	return out
}

func TestCount(t *testing.T) {
	t.Parallel()
	long, short := now.Add(-10*time.Minute), now.Add(-time.Minute)
	deleting := pod("d", "unschedulable", long)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	failed := pod("f", "unschedulable", long)
	failed.Status.Phase = corev1.PodFailed
	for _, tc := range []struct {
		name string
		pods []*corev1.Pod
		want failover.Measurement
	}{
		{"none", nil, failover.Measurement{}},
		{"Ready and running pods", []*corev1.Pod{pod("a", "ready", now), pod("b", "ready", now), pod("c", "running", now)}, failover.Measurement{Ready: 2}},
		{"unschedulable longer than the threshold", []*corev1.Pod{pod("a", "ready", now), pod("u", "unschedulable", long), pod("v", "unschedulable", long)},
			failover.Measurement{Unschedulable: 2, Ready: 1}},
		{"unschedulable for less than the threshold: not yet", []*corev1.Pod{pod("u", "unschedulable", short), pod("v", "unschedulable", long)},
			failover.Measurement{Unschedulable: 1}},
		{"pending, not yet found unschedulable", []*corev1.Pod{pod("p", "pending", now)}, failover.Measurement{}},
		{"being deleted or finished: neither", []*corev1.Pod{deleting, failed}, failover.Measurement{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, count(hubPodsOf(tc.pods...), now, 5*time.Minute)); diff != "" {
				t.Errorf("count() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMeasure(t *testing.T) {
	t.Parallel()
	long := now.Add(-10 * time.Minute)
	webSelector := labels.SelectorFromSet(labels.Set{"app": "web"})
	other := pod("o", "unschedulable", long)
	other.Labels = map[string]string{"app": "other"}
	members := map[string][]*corev1.Pod{
		"m1": {pod("a", "ready", now), pod("u", "unschedulable", long), pod("v", "unschedulable", long), pod("w", "ready", now), other},
		"m2": {pod("b", "ready", now), pod("x", "unschedulable", long)},
		// m3: another workload's pod is unschedulable, not web's.
		"m3": {pod("c", "ready", now), other},
		// m4: none unschedulable (long enough).
		"m4": {pod("d", "ready", now), pod("y", "unschedulable", now)},
	}
	for _, tc := range []struct {
		name string
		// clusters: the lacking clusters with their aggregated Ready
		// replicas.
		clusters    map[string]int32
		notReady    string // a cluster that is not Ready
		noWorkload  string // a cluster whose Deployment cannot be read
		podsUnknown string // a cluster whose pods are unknown
		want        map[string]failover.Measurement
		// wantRead are the clusters whose Deployment is read.
		wantRead []string
	}{
		{name: "every lacking cluster measured; other workloads' pods do not count", clusters: map[string]int32{"m1": 0, "m2": 0},
			want:     map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 2}, "m2": {Unschedulable: 1, Ready: 1}},
			wantRead: []string{"m1", "m2"}},
		{name: "only the lacking clusters", clusters: map[string]int32{"m2": 1},
			want: map[string]failover.Measurement{"m2": {Unschedulable: 1, Ready: 1}}, wantRead: []string{"m2"}},
		{name: "the aggregated status says more are Ready than the pods show: the larger counts", clusters: map[string]int32{"m1": 3},
			want: map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 3}}, wantRead: []string{"m1"}},
		{name: "a cluster not Ready is left out", clusters: map[string]int32{"m1": 0, "m2": 0}, notReady: "m1",
			want: map[string]failover.Measurement{"m2": {Unschedulable: 1, Ready: 1}}, wantRead: []string{"m2"}},
		{name: "a cluster whose Deployment cannot be read is left out", clusters: map[string]int32{"m1": 0, "m2": 0}, noWorkload: "m2",
			want: map[string]failover.Measurement{"m1": {Unschedulable: 2, Ready: 2}}, wantRead: []string{"m1", "m2"}},
		{name: "a cluster whose pods are unknown is left out", clusters: map[string]int32{"m1": 0, "m2": 0}, podsUnknown: "m1",
			want: map[string]failover.Measurement{"m2": {Unschedulable: 1, Ready: 1}}, wantRead: []string{"m2"}},
		{name: "another workload unschedulable: the Deployment is read, nothing of web unschedulable", clusters: map[string]int32{"m3": 0},
			want: map[string]failover.Measurement{"m3": {Ready: 1}}, wantRead: []string{"m3"}},
		{name: "nothing in the namespace unschedulable long enough: the member is not asked", clusters: map[string]int32{"m4": 0},
			want: map[string]failover.Measurement{}},
		{name: "nothing lacking: nothing measured", clusters: map[string]int32{}, want: map[string]failover.Measurement{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var read []string
			r := measureReconciler{
				clusterReady: func(name string) bool { return name != tc.notReady },
				selector: func(_ context.Context, cluster, namespace, name string) (labels.Selector, error) {
					read = append(read, cluster)
					if cluster == tc.noWorkload || namespace != "ns" || name != "web" {
						return nil, errors.New("not found")
					}
					return webSelector, nil
				},
				pods: func(cluster, namespace string) ([]*member.Pod, error) {
					if cluster == tc.podsUnknown {
						return nil, errPodsUnknown
					}
					if namespace != "ns" {
						t.Errorf("pods of %s, want ns", namespace)
					}
					return hubPodsOf(members[cluster]...), nil
				},
				now:       func() time.Time { return now },
				threshold: 5 * time.Minute,
			}
			got := r.reconcile(context.Background(), rb(dynamicPlacement), tc.clusters)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("measurements (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRead, read); diff != "" {
				t.Errorf("member Deployments read (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeploymentSelector(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		in      *metav1.LabelSelector
		want    string
		wantErr bool
	}{
		{name: "labels", in: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, want: "app=web"},
		{name: "expressions", in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}}, want: "app in (web)"},
		{name: "none would select every pod", in: nil, wantErr: true},
		{name: "empty would select every pod", in: &metav1.LabelSelector{}, wantErr: true},
		{name: "invalid", in: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := deploymentSelector(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %t", err, tc.wantErr)
			}
			if err == nil && got.String() != tc.want {
				t.Errorf("selector %s, want %s", got, tc.want)
			}
		})
	}
}
