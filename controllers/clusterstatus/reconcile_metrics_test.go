package clusterstatus

import (
	"context"
	"net/http"
	"testing"
	"time"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/telemetry"
	"github.com/flotilla-io/flotilla/telemetry/telemetrytest"
)

// The cluster gauges follow the status reconcile computes, the held one
// while a failure is within the threshold, and leave with the cluster.
// Not parallel: the gauges of member1 are the process's.
func TestReconcileRecordsClusterMetrics(t *testing.T) {
	l := map[string]string{"cluster_name": "member1"}
	notReady := healthy()
	notReady.readyz, notReady.readyzCode = "[-]etcd failed", http.StatusInternalServerError
	for _, tc := range []struct {
		name    string
		cluster *clusterv1alpha1.Cluster
		member  *fakeMember
		opts    Options
		// recorded: member1 has series before.
		recorded bool
		// want are the gauges afterwards; nil: member1 has no series.
		want map[string]float64
	}{
		{name: "healthy member", cluster: push(), member: healthy(),
			want: map[string]float64{telemetry.ClusterReadyState: 1, telemetry.ClusterNodeNumber: 2, telemetry.ClusterReadyNodeNumber: 1,
				telemetry.ClusterCPUAllocatableNumber: 8, telemetry.ClusterPodAllocatableNumber: 220, telemetry.ClusterCPUAllocatedNumber: 1}},
		{name: "not ready past the threshold", cluster: push(func(c *clusterv1alpha1.Cluster) { c.Status = healthyStatus() }), member: notReady,
			want: map[string]float64{telemetry.ClusterReadyState: 0, telemetry.ClusterNodeNumber: 2}},
		{name: "failure within the threshold: the stored status", cluster: push(func(c *clusterv1alpha1.Cluster) { c.Status = healthyStatus() }),
			member: notReady, opts: Options{FailureThreshold: time.Minute},
			want: map[string]float64{telemetry.ClusterReadyState: 1, telemetry.ClusterNodeNumber: 2}},
		{name: "cluster gone: its series deleted", member: healthy(), recorded: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each case starts from series of its own.
			telemetry.DeleteCluster("member1")
			if tc.recorded {
				status := healthyStatus()
				telemetry.RecordClusterStatus("member1", &status)
				telemetry.ObserveClusterSyncStatus("member1", time.Now())
			}
			syncs, _ := telemetrytest.Sample(t, telemetry.ClusterSyncStatusDuration, l)
			f := newFixture(t, tc.cluster, tc.member, tc.opts)
			if err := f.ctrl.reconcile(context.Background(), "member1"); err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				for _, name := range []string{telemetry.ClusterReadyState, telemetry.ClusterNodeNumber, telemetry.ClusterSyncStatusDuration} {
					if _, found := telemetrytest.Sample(t, name, l); found {
						t.Errorf("%s still has member1's series", name)
					}
				}
				return
			}
			for name, w := range tc.want {
				if v, found := telemetrytest.Sample(t, name, l); !found || v != w {
					t.Errorf("%s = %v (found %v), want %v", name, v, found, w)
				}
			}
			if v, _ := telemetrytest.Sample(t, telemetry.ClusterSyncStatusDuration, l); v != syncs+1 {
				t.Errorf("%s count %v, want %v", telemetry.ClusterSyncStatusDuration, v, syncs+1)
			}
		})
	}
}
