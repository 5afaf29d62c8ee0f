package failover

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

var t0 = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func tainted(name string, taints ...corev1.Taint) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterSpec{Taints: taints}}
}

func noExecute(key string, added time.Time) corev1.Taint {
	at := metav1.NewTime(added)
	return corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute, TimeAdded: &at}
}

func tolerate(key string, seconds *int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func TestNoExecuteEvictions(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "m1", Replicas: 3}, {Name: "m2", Replicas: 2}}
	for _, tc := range []struct {
		name        string
		clusters    []*clusterv1alpha1.Cluster
		tolerations []corev1.Toleration
		want        []string // evicted clusters
		wantAfter   time.Duration
		wantMessage string
	}{{
		name:     "no taints",
		clusters: []*clusterv1alpha1.Cluster{tainted("m1"), tainted("m2")},
	}, {
		name:     "NoSchedule taints evict nothing",
		clusters: []*clusterv1alpha1.Cluster{tainted("m1", corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), tainted("m2")},
	}, {
		name:        "untolerated NoExecute: at once",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("dead", t0)), tainted("m2")},
		want:        []string{"m1"},
		wantMessage: "cluster m1 has the NoExecute taint dead:NoExecute, which the placement does not tolerate",
	}, {
		name:        "tolerated for 10s, added 4s ago: in 6s",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("dead", t0.Add(-4*time.Second))), tainted("m2")},
		tolerations: []corev1.Toleration{tolerate("dead", ptr.To[int64](10))},
		wantAfter:   6 * time.Second,
	}, {
		name:        "tolerated for 10s, added 10s ago: now",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("dead", t0.Add(-10*time.Second))), tainted("m2")},
		tolerations: []corev1.Toleration{tolerate("dead", ptr.To[int64](10))},
		want:        []string{"m1"},
		wantMessage: "longer than the 10s the placement tolerates",
	}, {
		name:        "tolerated forever",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("dead", t0.Add(-time.Hour))), tainted("m2")},
		tolerations: []corev1.Toleration{tolerate("dead", nil)},
	}, {
		name:        "the shortest toleration of those used, from the earliest taint",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("a", t0.Add(-5*time.Second)), noExecute("b", t0.Add(-1*time.Second))), tainted("m2")},
		tolerations: []corev1.Toleration{tolerate("a", ptr.To[int64](30)), tolerate("b", ptr.To[int64](8)), tolerate("c", ptr.To[int64](1))},
		wantAfter:   3 * time.Second,
	}, {
		name:        "one taint of two untolerated",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1"), tainted("m2", noExecute("a", t0), noExecute("b", t0))},
		tolerations: []corev1.Toleration{tolerate("a", nil)},
		want:        []string{"m2"},
	}, {
		name:        "both clusters, the next due first",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("x", t0)), tainted("m2", noExecute("y", t0.Add(-time.Second)))},
		tolerations: []corev1.Toleration{tolerate("x", ptr.To[int64](20)), tolerate("y", ptr.To[int64](5))},
		wantAfter:   4 * time.Second,
	}, {
		name:        "negative tolerationSeconds is 0",
		clusters:    []*clusterv1alpha1.Cluster{tainted("m1", noExecute("x", t0)), tainted("m2")},
		tolerations: []corev1.Toleration{tolerate("x", ptr.To[int64](-5))},
		want:        []string{"m1"},
	}, {
		name:     "a deleted cluster is not decided here",
		clusters: []*clusterv1alpha1.Cluster{tainted("m2")},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			byName := map[string]*clusterv1alpha1.Cluster{}
			for _, c := range tc.clusters {
				byName[c.Name] = c
			}
			evict, after := NoExecuteEvictions(targets, tc.tolerations, byName, t0)
			var got []string
			for _, e := range evict {
				got = append(got, e.Cluster)
				if want := map[string]int32{"m1": 3, "m2": 2}[e.Cluster]; e.Replicas != want {
					t.Errorf("%s: replicas %d, want %d", e.Cluster, e.Replicas, want)
				}
				if !strings.Contains(e.Message, tc.wantMessage) {
					t.Errorf("message %q, want it to contain %q", e.Message, tc.wantMessage)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("evicted %v, want %v", got, tc.want)
			}
			if after != tc.wantAfter {
				t.Errorf("next in %v, want %v", after, tc.wantAfter)
			}
		})
	}
}

func TestAssessTask(t *testing.T) {
	created := metav1.NewTime(t0.Add(-time.Minute))
	healthy := func(names ...string) []workv1alpha2.AggregatedStatusItem {
		var out []workv1alpha2.AggregatedStatusItem
		for _, n := range names {
			out = append(out, workv1alpha2.AggregatedStatusItem{ClusterName: n, Applied: true, Health: workv1alpha2.ResourceHealthy})
		}
		return out
	}
	binding := func(status []workv1alpha2.AggregatedStatusItem, observed int64, clusters ...string) Binding {
		spec := &workv1alpha2.ResourceBindingSpec{}
		for _, c := range clusters {
			spec.Clusters = append(spec.Clusters, workv1alpha2.TargetCluster{Name: c})
		}
		return Binding{Spec: spec, Status: &workv1alpha2.ResourceBindingStatus{AggregatedStatus: status, SchedulerObservedGeneration: observed,
			Conditions: []metav1.Condition{{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}}}, Generation: 2}
	}
	// The scheduler's decision is current, the aggregation not yet: its
	// items are of the clusters and assignments before it.
	aggregatedBefore := binding(healthy("m2"), 2, "m2")
	aggregatedBefore.Status.Conditions[0].ObservedGeneration = 1
	notAggregated := binding(healthy("m2"), 2, "m2")
	notAggregated.Status.Conditions = nil
	task := func(mode policyv1alpha1.PurgeMode, mutate ...func(*workv1alpha2.GracefulEvictionTask)) *workv1alpha2.GracefulEvictionTask {
		tk := &workv1alpha2.GracefulEvictionTask{FromCluster: "m1", PurgeMode: mode, CreationTimestamp: &created}
		for _, m := range mutate {
			m(tk)
		}
		return tk
	}
	unhealthy := []workv1alpha2.AggregatedStatusItem{{ClusterName: "m2", Applied: true, Health: workv1alpha2.ResourceUnhealthy}}
	for _, tc := range []struct {
		name      string
		task      *workv1alpha2.GracefulEvictionTask
		binding   Binding
		timeout   time.Duration
		wantDone  bool
		wantAfter time.Duration
	}{
		{"gracefully, replacement healthy", task(policyv1alpha1.PurgeModeGracefully), binding(healthy("m2"), 2, "m2"), 10 * time.Minute, true, 0},
		{"graciously, replacement healthy", task(policyv1alpha1.PurgeModeGraciously), binding(healthy("m2", "m3"), 2, "m2", "m3"), 10 * time.Minute, true, 0},
		{"replacement not yet healthy: wait for the rest of the timeout", task(policyv1alpha1.PurgeModeGracefully), binding(unhealthy, 2, "m2"), 10 * time.Minute, false, 9 * time.Minute},
		{"one of two replacements not reported", task(policyv1alpha1.PurgeModeGracefully), binding(healthy("m2"), 2, "m2", "m3"), 10 * time.Minute, false, 9 * time.Minute},
		{"status of an older schedule", task(policyv1alpha1.PurgeModeGracefully), binding(healthy("m2"), 1, "m2"), 10 * time.Minute, false, 9 * time.Minute},
		{"aggregated status of an older generation", task(policyv1alpha1.PurgeModeGracefully), aggregatedBefore, 10 * time.Minute, false, 9 * time.Minute},
		{"no FullyApplied condition", task(policyv1alpha1.PurgeModeGracefully), notAggregated, 10 * time.Minute, false, 9 * time.Minute},
		{"scheduled nowhere", task(policyv1alpha1.PurgeModeGracefully), binding(nil, 2), 10 * time.Minute, false, 9 * time.Minute},
		{"timeout ended", task(policyv1alpha1.PurgeModeGracefully), binding(unhealthy, 2, "m2"), time.Minute, true, 0},
		{"the task's grace period wins over the timeout", task(policyv1alpha1.PurgeModeGracefully, func(tk *workv1alpha2.GracefulEvictionTask) { tk.GracePeriodSeconds = ptr.To[int32](90) }), binding(unhealthy, 2, "m2"), time.Minute, false, 30 * time.Second},
		// Their Work went at once; the task waits like the others (it
		// keeps the scheduler away and carries the preserved state).
		{"directly: open until the replacement is healthy", task(policyv1alpha1.PurgeModeDirectly), binding(nil, 2), time.Hour, false, 59 * time.Minute},
		{"immediately, replacement healthy", task(policyv1alpha1.PurgeModeImmediately), binding(healthy("m2"), 2, "m2"), time.Hour, true, 0},
		{"immediately, grace period ended", task(policyv1alpha1.PurgeModeImmediately), binding(nil, 2), time.Minute, true, 0},
		{"never, even after the timeout", task(policyv1alpha1.PurgeModeNever), binding(healthy("m2"), 2, "m2"), time.Second, false, 0},
		{"deletion suppressed", task(policyv1alpha1.PurgeModeGracefully, func(tk *workv1alpha2.GracefulEvictionTask) { tk.SuppressDeletion = ptr.To(true) }), binding(healthy("m2"), 2, "m2"), time.Second, false, 0},
		{"suppression lifted", task(policyv1alpha1.PurgeModeGracefully, func(tk *workv1alpha2.GracefulEvictionTask) { tk.SuppressDeletion = ptr.To(false) }), binding(nil, 2), time.Hour, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := AssessTask(tc.task, tc.binding, tc.timeout, t0)
			if v.Done != tc.wantDone || v.After != tc.wantAfter {
				t.Errorf("got done %v after %v (%q), want done %v after %v", v.Done, v.After, v.Why, tc.wantDone, tc.wantAfter)
			}
			if v.Done && v.Why == "" {
				t.Error("done without a reason")
			}
		})
	}
}

func TestPartitioned(t *testing.T) {
	cluster := func(ready metav1.ConditionStatus) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{}
		if ready != "" {
			c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready}}
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		statuses []metav1.ConditionStatus
		want     bool
	}{
		{"none", nil, false},
		{"all ready", []metav1.ConditionStatus{"True", "True", "True"}, false},
		{"one of two down: 50%", []metav1.ConditionStatus{"True", "False"}, false},
		{"both down", []metav1.ConditionStatus{"Unknown", "False"}, true},
		{"two of three down: 67%", []metav1.ConditionStatus{"True", "Unknown", "Unknown"}, true},
		{"no Ready condition counts as not ready", []metav1.ConditionStatus{"True", "", ""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs []*clusterv1alpha1.Cluster
			for _, s := range tc.statuses {
				cs = append(cs, cluster(s))
			}
			got, why := Partitioned(cs, 0.55)
			if got != tc.want || got != (why != "") {
				t.Errorf("paused %v (%q), want %v", got, why, tc.want)
			}
		})
	}
}

func TestSettling(t *testing.T) {
	cluster := func(status metav1.ConditionStatus, since time.Duration) *clusterv1alpha1.Cluster {
		return &clusterv1alpha1.Cluster{Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{
			Type: clusterv1alpha1.ClusterConditionReady, Status: status, LastTransitionTime: metav1.NewTime(t0.Add(-since))}}}}
	}
	for _, tc := range []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		want    time.Duration
	}{
		{"ready: not held", cluster(metav1.ConditionTrue, 0), 0},
		{"not ready for 10s of 30s: 20s more", cluster(metav1.ConditionFalse, 10*time.Second), 20 * time.Second},
		{"unknown for 40s: settled", cluster(metav1.ConditionUnknown, 40*time.Second), 0},
		{"no Ready condition: the whole window", &clusterv1alpha1.Cluster{}, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Settling(tc.cluster, 30*time.Second, t0); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
