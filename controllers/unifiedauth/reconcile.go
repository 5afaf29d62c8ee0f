package unifiedauth

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// reconcile keeps the impersonation RBAC of one cluster: rbacReconciler
// derives the member ClusterRole and ClusterRoleBinding from host RBAC,
// workReconciler writes the Work carrying each (none when it is up to
// date), and the Cluster gets one event for the round.
func (c *Controller) reconcile(ctx context.Context, name string) error {
	cluster, err := c.clusters.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if cluster.DeletionTimestamp != nil || cluster.Spec.ImpersonatorSecretRef == nil {
		return nil
	}
	objs, err := c.rbac.reconcile(cluster)
	if err != nil {
		return err
	}
	wrote := false
	for _, o := range objs {
		// The binding waits for its role.
		var w bool
		if w, err = c.works.reconcile(ctx, cluster, o.kind, o.obj); err != nil {
			break
		}
		wrote = wrote || w
	}
	switch {
	case err != nil:
		c.event(cluster, corev1.EventTypeWarning, EventReasonSyncImpersonationConfigFailed, fmt.Sprintf("Failed to sync impersonation config, err: %v", err))
	case wrote:
		c.event(cluster, corev1.EventTypeNormal, EventReasonSyncImpersonationConfigSucceed, "Sync impersonation config succeed.")
	}
	return err
}

func (c *Controller) event(cluster *clusterv1alpha1.Cluster, eventType, reason, msg string) {
	if c.recorder != nil {
		c.recorder.Event(cluster, eventType, reason, msg)
	}
}
