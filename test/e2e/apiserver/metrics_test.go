package apiserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

const metricsPolicy = `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  resourceSelectors:
    - {apiVersion: apps/v1, kind: Deployment, name: %[1]s}
  placement:
    clusterAffinity: {clusterNames: [member1]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: nginx, image: nginx:1.7.9}]}
`

// scrape reads flotilla-apiserver's /metrics on --metrics-bind-address.
func scrape(ctx context.Context) (framework.Samples, error) {
	return framework.PlainMetrics(ctx, framework.Env.Host.Ports.FlotillaMetrics)
}

// flotilla-apiserver serves Karmada's metrics, the workqueues' and the Go
// runtime's on --metrics-bind-address over plain HTTP. The cluster gauges
// say member1 is ready; propagating a Deployment to member1, updating it
// and deleting it moves the metrics of each step of the pipeline; then
// every metric is there.
func TestMetricsMoveWithPropagation(t *testing.T) {
	ctx := t.Context()
	var before framework.Samples
	member1 := map[string]string{"cluster_name": "member1"}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		ss, err := scrape(ctx)
		if err != nil {
			return err.Error()
		}
		before = ss
		if v := ss.Value(telemetry.ClusterReadyState, member1); v != 1 {
			return fmt.Sprintf("%s{cluster_name=member1} = %v, want 1", telemetry.ClusterReadyState, v)
		}
		return ""
	})
	if v := before.Value(telemetry.BuildInfo, nil); v != 1 {
		t.Errorf("%s = %v, want 1", telemetry.BuildInfo, v)
	}
	for _, name := range []string{telemetry.ClusterNodeNumber, telemetry.ClusterReadyNodeNumber, telemetry.ClusterCPUAllocatableNumber,
		telemetry.ClusterMemoryAllocatableBytes, telemetry.ClusterPodAllocatableNumber, telemetry.ClusterSyncStatusDuration} {
		if v := before.Value(name, member1); v <= 0 {
			t.Errorf("%s{cluster_name=member1} = %v, want more than 0", name, v)
		}
	}

	ns := framework.Namespace(t, "metrics-e2e")
	const name = "metrics-web"
	framework.Apply(t, fmt.Sprintf(metricsPolicy, name, ns))
	member := framework.MemberClient(t, "member1")
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		if _, err := member.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return "the Deployment is not in member1: " + err.Error()
		}
		return ""
	})
	deployment := map[string]string{"result": "success", "kind": "Deployment", "member_cluster": "member1"}
	success := map[string]string{"result": "success"}
	moved := func(ctx context.Context, checks map[string]map[string]string) string {
		after, err := scrape(ctx)
		if err != nil {
			return err.Error()
		}
		var still []string
		for metric, labels := range checks {
			if b, a := before.Value(metric, labels), after.Value(metric, labels); a <= b {
				still = append(still, fmt.Sprintf("%s%v %v -> %v", metric, labels, b, a))
			}
		}
		if len(still) > 0 {
			return "not moved: " + strings.Join(still, ", ")
		}
		return ""
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		return moved(ctx, map[string]map[string]string{
			telemetry.ResourceMatchPolicyDuration:    nil,
			telemetry.ResourceApplyPolicyDuration:    success,
			telemetry.PolicyApplyAttemptsTotal:       success,
			telemetry.SchedulerScheduleAttemptsTotal: {"result": "scheduled"},
			telemetry.SchedulerE2ESchedulingDuration: {"result": "scheduled"},
			telemetry.SchedulerAlgorithmDuration:     {"scheduleStep": "Filter"},
			telemetry.SchedulerQueueIncomingBindings: {"event": telemetry.EventBindingAdd},
			telemetry.BindingSyncWorkDuration:        success,
			telemetry.WorkSyncWorkloadDuration:       success,
			telemetry.CreateResourceToCluster:        deployment,
		})
	})

	// An update of the template is an update in the member.
	patch := []byte(`{"spec":{"replicas":2}}`)
	if _, err := framework.HostClient(t).AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		return moved(ctx, map[string]map[string]string{telemetry.UpdateResourceToCluster: deployment})
	})
	// A deleted template is deleted from the member.
	if err := framework.HostClient(t).AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 60*time.Second, func(ctx context.Context) string {
		return moved(ctx, map[string]map[string]string{telemetry.DeleteResourceFromCluster: deployment})
	})

	after, err := scrape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(telemetry.Names(), "workqueue_adds_total", "workqueue_depth", "go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total") {
		if !after.Has(name) {
			t.Errorf("%s is not served", name)
		}
	}
}
