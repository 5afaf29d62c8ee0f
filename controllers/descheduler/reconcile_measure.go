package descheduler

import (
	"context"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/failover"
	"github.com/flotilla-io/flotilla/member"
)

// measureReconciler counts a workload's unschedulable and Ready replicas
// in the clusters it lacks replicas in, from the member hub's pods (the
// informers every reader of the process shares: no watch of its own).
type measureReconciler struct {
	// clusterReady tells whether a Cluster is Ready (and not going).
	clusterReady func(name string) bool
	// selector returns the selector of the Deployment namespace/name in a
	// member: the one its ReplicaSets, and so its pods, are made with.
	selector func(ctx context.Context, cluster, namespace, name string) (labels.Selector, error)
	// pods lists the pods of namespace in a member (shared: do not
	// modify); an error when they are unknown.
	pods func(cluster, namespace string) ([]*member.Pod, error)
	now  func() time.Time
	// threshold is how long a pod must have been unschedulable to count.
	threshold time.Duration
}

// reconcile measures rb's workload in clusters (each with the Ready
// replicas the binding's aggregated status says). A cluster that is not
// Ready, or whose Deployment or pods cannot be read, is left out: nothing
// is decided there without a measurement. So is a cluster where no pod of
// the namespace is unschedulable, whose Deployment is then not read (the
// only request to the member). The Ready replicas are the
// larger of the aggregated status's and the Ready pods counted, so a
// stale figure never lets what runs be taken off.
func (r *measureReconciler) reconcile(ctx context.Context, rb *workv1alpha2.ResourceBinding, clusters map[string]int32) map[string]failover.Measurement {
	logger := klog.FromContext(ctx)
	res := rb.Spec.Resource
	out := map[string]failover.Measurement{}
	for _, cluster := range slices.Sorted(maps.Keys(clusters)) {
		if !r.clusterReady(cluster) {
			logger.V(4).Info("Not descheduling from a cluster that is not Ready", "binding", klog.KObj(rb), "cluster", cluster)
			continue
		}
		now := r.now()
		pods, err := r.pods(cluster, res.Namespace)
		if err != nil {
			logger.V(2).Info("Cannot count the member pods; not descheduling there", "binding", klog.KObj(rb), "cluster", cluster, "err", err)
			continue
		}
		if count(pods, now, r.threshold).Unschedulable == 0 {
			// No pod of the namespace is unschedulable: nothing to take
			// off, and no need to read the member Deployment.
			continue
		}
		selector, err := r.selector(ctx, cluster, res.Namespace, res.Name)
		if err != nil {
			logger.V(2).Info("Cannot read the member workload; not descheduling there", "binding", klog.KObj(rb), "cluster", cluster, "err", err)
			continue
		}
		m := count(selected(pods, selector), now, r.threshold)
		m.Ready = max(m.Ready, clusters[cluster])
		logger.V(4).Info("Measured", "binding", klog.KObj(rb), "cluster", cluster, "unschedulable", m.Unschedulable, "ready", m.Ready)
		out[cluster] = m
	}
	return out
}

// selected are the pods selector matches.
func selected(pods []*member.Pod, selector labels.Selector) []*member.Pod {
	var out []*member.Pod
	for _, p := range pods {
		if selector.Matches(labels.Set(p.Labels())) {
			out = append(out, p)
		}
	}
	return out
}

// count counts the pods Ready and those the member's scheduler has found
// no node for since more than threshold before now (as Karmada's
// estimator: PodScheduled False with reason Unschedulable). Pods being
// deleted or finished count as neither.
func count(pods []*member.Pod, now time.Time, threshold time.Duration) failover.Measurement {
	var m failover.Measurement
	for _, p := range pods {
		if p.Deleting || p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed {
			continue
		}
		if p.Ready == corev1.ConditionTrue {
			m.Ready++
		}
		if since := p.UnschedulableSince(); !since.IsZero() && now.Sub(since) > threshold {
			m.Unschedulable++
		}
	}
	return m
}
