package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

func sample(t *testing.T, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	return telemetrytest.Sample(t, name, labels)
}

// Each helper moves its metric, with Karmada's labels, by one.
func TestHelpersMoveTheirMetric(t *testing.T) {
	boom := errors.New("boom")
	start := time.Now()
	for _, tc := range []struct {
		name   string
		do     func()
		metric string
		labels map[string]string
	}{
		{"match policy", func() { ObserveMatchPolicy(start) }, ResourceMatchPolicyDuration, nil},
		{"apply policy duration", func() { ObserveApplyPolicy(nil, start) }, ResourceApplyPolicyDuration, map[string]string{"result": "success"}},
		{"apply policy attempts, error", func() { ObserveApplyPolicy(boom, start) }, PolicyApplyAttemptsTotal, map[string]string{"result": "error"}},
		{"preemption", func() { CountPolicyPreemption(nil) }, PolicyPreemptionTotal, map[string]string{"result": "success"}},
		{"sync work", func() { ObserveSyncWork(boom, start) }, BindingSyncWorkDuration, map[string]string{"result": "error"}},
		{"sync workload", func() { ObserveSyncWorkload(nil, start) }, WorkSyncWorkloadDuration, map[string]string{"result": "success"}},
		{"create", func() { CountCreateResource(nil, "apps/v1", "Deployment", "m1") }, CreateResourceToCluster,
			map[string]string{"result": "success", "apiversion": "apps/v1", "kind": "Deployment", "member_cluster": "m1"}},
		{"update", func() { CountUpdateResource(boom, "v1", "ConfigMap", "m2", "updated") }, UpdateResourceToCluster,
			map[string]string{"result": "error", "apiversion": "v1", "kind": "ConfigMap", "member_cluster": "m2", "operationResult": "updated"}},
		{"delete", func() { CountDeleteResource(nil, "v1", "Service", "m1") }, DeleteResourceFromCluster,
			map[string]string{"result": "success", "apiversion": "v1", "kind": "Service", "member_cluster": "m1"}},
		{"federatedhpa", func() { ObserveFederatedHPA(nil, start) }, FederatedHPAProcessDuration, map[string]string{"result": "success"}},
		{"federatedhpa pull", func() { ObserveFederatedHPAPullMetrics(boom, "Pods", start) }, FederatedHPAPullMetricsDuration,
			map[string]string{"result": "error", "metricType": "Pods"}},
		{"cronfederatedhpa", func() { ObserveCronFederatedHPA(nil, start) }, CronFederatedHPAProcessDuration, map[string]string{"result": "success"}},
		{"schedule attempts", func() { ObserveSchedule(ScheduleTypeFirst, nil, start) }, SchedulerScheduleAttemptsTotal,
			map[string]string{"result": "scheduled", "scheduleType": "FirstSchedule"}},
		{"e2e scheduling, error", func() { ObserveSchedule(ScheduleTypeReconcile, boom, start) }, SchedulerE2ESchedulingDuration,
			map[string]string{"result": "error", "scheduleType": "ReconcileSchedule"}},
		{"algorithm step", func() { ObserveScheduleStep("Filter", time.Millisecond) }, SchedulerAlgorithmDuration, map[string]string{"scheduleStep": "Filter"}},
		{"queue incoming", func() { CountSchedulerQueueIncoming(EventBindingAdd) }, SchedulerQueueIncomingBindings, map[string]string{"event": "BindingAdd"}},
		{"cluster sync status", func() { ObserveClusterSyncStatus("m1", start) }, ClusterSyncStatusDuration, map[string]string{"cluster_name": "m1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := sample(t, tc.metric, tc.labels)
			tc.do()
			after, found := sample(t, tc.metric, tc.labels)
			if !found || after != before+1 {
				t.Fatalf("%s%v: %v -> %v (found %v), want one more", tc.metric, tc.labels, before, after, found)
			}
		})
	}
}

// The cluster gauges follow the computed status and leave with the cluster.
func TestRecordClusterStatus(t *testing.T) {
	status := &clusterv1alpha1.ClusterStatus{
		Conditions:  []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
		NodeSummary: &clusterv1alpha1.NodeSummary{TotalNum: 3, ReadyNum: 2},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("4")},
		},
	}
	const name = "status-test"
	RecordClusterStatus(name, status)
	want := map[string]float64{
		ClusterReadyState: 1, ClusterNodeNumber: 3, ClusterReadyNodeNumber: 2,
		ClusterCPUAllocatableNumber: 8, ClusterMemoryAllocatableBytes: 16 << 30, ClusterPodAllocatableNumber: 110,
		ClusterCPUAllocatedNumber: 1.5, ClusterMemoryAllocatedBytes: 1 << 30, ClusterPodAllocatedNumber: 4,
	}
	l := map[string]string{"cluster_name": name}
	for metric, w := range want {
		if v, found := sample(t, metric, l); !found || v != w {
			t.Errorf("%s = %v (found %v), want %v", metric, v, found, w)
		}
	}
	// Not ready, summaries not collected: the state drops, the rest stays.
	RecordClusterStatus(name, &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse}}})
	if v, _ := sample(t, ClusterReadyState, l); v != 0 {
		t.Errorf("%s = %v after the cluster became not ready, want 0", ClusterReadyState, v)
	}
	if v, _ := sample(t, ClusterNodeNumber, l); v != 3 {
		t.Errorf("%s = %v without a node summary, want the last value 3", ClusterNodeNumber, v)
	}
	ObserveClusterSyncStatus(name, time.Now())
	DeleteCluster(name)
	for _, metric := range append(Names()[:9], ClusterSyncStatusDuration) {
		if _, found := sample(t, metric, l); found {
			t.Errorf("%s still has the deleted cluster's series", metric)
		}
	}
}

// The build labels come from the binary's build information.
func TestBuildLabels(t *testing.T) {
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want map[string]string
	}{
		{"no build info", nil, false, map[string]string{"git_version": "", "git_commit": ""}},
		{"stamped", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
		}}, true, map[string]string{"git_version": "v1.2.3", "git_commit": "0123456789abcdef", "git_short_commit": "0123456",
			"git_tree_state": "dirty", "build_date": "2026-01-02T03:04:05Z"}},
		{"clean tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "false"}}},
			true, map[string]string{"git_version": "(devel)", "git_tree_state": "clean"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := buildLabels(tc.info, tc.ok)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for _, k := range []string{"go_version", "compiler", "platform"} {
				if got[k] == "" {
					t.Errorf("%s is empty", k)
				}
			}
		})
	}
}

// Serve serves every declared metric, the workqueues' and the Go
// runtime's over plain HTTP; an empty address or "0" serves nothing.
func TestServe(t *testing.T) {
	for _, addr := range []string{"", "0"} {
		if a, err := Serve(t.Context(), addr); a != nil || err != nil {
			t.Errorf("Serve(%q) = %v, %v; want disabled", addr, a, err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "metrics-test"})
	defer q.ShutDown()
	q.Add("a")
	// Series labelled by cluster or kind appear with their first observation.
	CountCreateResource(nil, "v1", "Pod", "serve-test")
	CountUpdateResource(nil, "v1", "Pod", "serve-test", "updated")
	CountDeleteResource(nil, "v1", "Pod", "serve-test")
	RecordClusterStatus("serve-test", &clusterv1alpha1.ClusterStatus{NodeSummary: &clusterv1alpha1.NodeSummary{},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}}})
	ObserveClusterSyncStatus("serve-test", time.Now())
	defer DeleteCluster("serve-test")

	resp, err := http.Get("http://" + addr.String() + Path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for _, name := range append(Names(), `workqueue_adds_total{name="metrics-test"}`, "go_goroutines", "process_start_time_seconds") {
		if !strings.Contains(text, "\n"+name) {
			t.Errorf("%s is not served", name)
		}
	}
	var build string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, BuildInfo+"{") {
			build = line
		}
	}
	if !strings.Contains(build, `go_version="go`) || !strings.HasSuffix(build, "} 1") {
		t.Errorf("%s is %q, want 1 with its labels", BuildInfo, build)
	}
}
