package clusterstatus

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/telemetry"
)

// reconcile reports one cluster. The sub-reconcilers run in order on a
// copy of the stored status, each filling its part: Ready from the probe
// (readyReconciler), then, on a ready member, the version, the served APIs
// and CompleteAPIEnablements (apisReconciler) and the node and resource
// summaries (summaryReconciler). failureThreshold then decides whether a
// failed probe is reported yet, and the result is written in one merge
// patch, none when nothing changed. The heartbeat Lease runs on its own
// (heartbeats).
func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) || (err == nil && cluster.DeletionTimestamp != nil) {
		c.forgetInformers(name)
		c.forgetClient(name)
		c.beats.stop(name)
		telemetry.DeleteCluster(name)
		return nil
	}
	if err != nil {
		return err
	}
	if !c.reports(cluster) {
		return nil
	}
	defer c.queue.AddAfter(name, c.opts.Interval)
	c.beats.start(name)
	start := time.Now()

	status := cluster.Status.DeepCopy()
	client, ready := c.ready.reconcile(ctx, cluster, status)
	if ready {
		c.apis.reconcile(cluster, client, status)
		err := c.summary.reconcile(cluster, client, status)
		if errors.Is(err, errListing) {
			// Look again soon rather than hold a worker.
			c.queue.AddAfter(name, cacheSyncPoll)
			return nil
		} else if err != nil {
			return err
		}
	}
	if c.failures.hold(name, ready, meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)) {
		// One failed probe is not an outage: keep reporting what we had.
		telemetry.RecordClusterStatus(name, &cluster.Status)
		telemetry.ObserveClusterSyncStatus(name, start)
		return nil
	}
	err = c.writeStatus(ctx, cluster, status)
	telemetry.ObserveClusterSyncStatus(name, start)
	if err != nil {
		// The stored status stands.
		status = &cluster.Status
	}
	telemetry.RecordClusterStatus(name, status)
	return err
}

// writeStatus writes status with one merge patch, none when it equals the
// stored one. status.remedyActions is the remedy controller's: it is left
// out of the patch, so a stale copy never brings back cleared actions.
func (c *Controller) writeStatus(ctx context.Context, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus) error {
	if apiequality.Semantic.DeepEqual(*status, cluster.Status) {
		return nil
	}
	// This controller is the only writer of the rest of a push cluster's
	// status: a merge patch of it needs no resourceVersion and never
	// conflicts with the cluster controller's spec and metadata writes.
	out := *status
	out.RemedyActions = nil
	patch, err := json.Marshal(map[string]any{"status": out})
	if err != nil {
		return err
	}
	_, err = c.client.ClusterV1alpha1().Clusters().Patch(ctx, cluster.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName}, "status")
	return err
}
