package cluster

import (
	"context"
	"encoding/json"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

// Reason and message of the Ready condition of a cluster whose status
// stopped being posted, as Karmada writes them.
const (
	ReasonClusterStatusUnknown  = "ClusterStatusUnknown"
	MessageClusterStatusUnknown = "Cluster status controller stopped posting cluster status."
)

// Monitor marks clusters Unknown when their heartbeat Lease has not been
// renewed for the grace period; the readiness taints follow (unreachable).
type Monitor struct {
	ctrl        *Controller
	leases      coordinationlisters.LeaseLister
	gracePeriod time.Duration
}

// NewMonitor returns the monitor of c's clusters.
func (c *Controller) NewMonitor(leases coordinationlisters.LeaseLister, gracePeriod time.Duration) *Monitor {
	return &Monitor{ctrl: c, leases: leases, gracePeriod: gracePeriod}
}

// Run checks every period until ctx ends.
func (m *Monitor) Run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := m.check(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Monitoring cluster heartbeats failed")
			}
		}
	}
}

func (m *Monitor) check(ctx context.Context) error {
	clusters, err := m.ctrl.clusters.List(labels.Everything())
	if err != nil {
		return err
	}
	now := m.ctrl.now()
	for _, c := range clusters {
		ready := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
		if c.DeletionTimestamp != nil || ready == nil || ready.Status == metav1.ConditionUnknown {
			continue
		}
		lease, err := m.leases.Leases(names.LeaseNamespace).Get(c.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if !Stale(lease, ready.LastTransitionTime.Time, now, m.gracePeriod) {
			continue
		}
		conds := append([]metav1.Condition(nil), c.Status.Conditions...)
		meta.SetStatusCondition(&conds, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionUnknown,
			Reason: ReasonClusterStatusUnknown, Message: MessageClusterStatusUnknown, ObservedGeneration: c.Generation})
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
		if _, err := m.ctrl.client.ClusterV1alpha1().Clusters().Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName}, "status"); err != nil {
			return err
		}
		klog.FromContext(ctx).Info("Cluster heartbeat is stale; status Unknown", "cluster", c.Name)
	}
	return nil
}

// Stale reports whether a cluster's heartbeat is older than the grace
// period. Without a Lease, the last Ready transition stands in for it.
func Stale(lease *coordinationv1.Lease, lastTransition, now time.Time, grace time.Duration) bool {
	last := lastTransition
	if lease != nil && lease.Spec.RenewTime != nil {
		last = lease.Spec.RenewTime.Time
	}
	return now.Sub(last) > grace
}
