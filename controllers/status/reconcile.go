package status

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// reconcile aggregates the status of one binding: first the binding's
// aggregatedStatus and FullyApplied condition, then the template's status.
// Nothing is written when the result equals what is stored.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	b, err := c.getBinding(key)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if b.meta.DeletionTimestamp != nil {
		return nil
	}
	b = c.fresher(b)
	if targetClusters(b.spec).Len() == 0 && len(b.status.AggregatedStatus) == 0 && len(b.status.Conditions) == 0 {
		// A new binding the scheduler has not decided yet (or an
		// attached binding nobody requires yet): there is nothing to
		// aggregate, and the scheduler's (or the dependencies
		// distributor's) write requeues it.
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("binding", key)
	ctx = klog.NewContext(ctx, logger)

	objs, err := c.workIdx.ByIndex(workBindingIndex, worksIndexValue(b))
	if err != nil {
		return fmt.Errorf("listing works of %s: %w", b.describe, err)
	}
	works := make([]*workv1alpha1.Work, 0, len(objs))
	for _, obj := range objs {
		if w, ok := obj.(*workv1alpha1.Work); ok {
			works = append(works, w)
		}
	}
	// Waiting needs only the caches; the template may cost a GET.
	if wait := c.unreported(b, works); wait > 0 {
		logger.V(4).Info("Waiting for the Works to report", "after", wait)
		c.queue.AddAfter(key, wait)
		return nil
	}

	// As in Karmada, a binding whose template is gone (or was replaced by a
	// new object of the same name) is left alone: the garbage collector is
	// about to remove it.
	tmpl, err := c.getTemplate(ctx, b.spec.Resource)
	if err != nil {
		return err
	}
	if tmpl == nil {
		logger.V(4).Info("Template not found; not aggregating", "resource", b.spec.Resource)
		return nil
	}
	items := aggregateItems(works, b.spec)

	if err := c.syncBindingStatus(ctx, b, tmpl.obj, items, driftedCondition(works, b.meta.Generation)); err != nil {
		return err
	}
	return c.syncTemplateStatus(ctx, b, tmpl, items)
}

// workReportGrace is how long a new Work to a Ready cluster may go without
// reporting whether it was applied before the binding's status is written
// without it: the execution controller reports a Work moments after it is
// created (seconds under a burst), and waiting for it turns the reports of
// all of a binding's Works into one write instead of one at creation and
// one per report. Works to clusters that are not Ready are not waited for.
const workReportGrace = 30 * time.Second

// unreported returns how long to wait for the Works of b that are not
// there yet or have not reported an Applied condition yet, each for at
// most its cluster's grace (workReportGrace, longer while the cluster's
// Works report late: reportLags) after it (or, for a missing Work, the binding's
// scheduling) appeared; zero when none is pending. Works that will not
// report soon are not waited for: those whose dispatching is suspended,
// and those to clusters that are not Ready.
func (c *Controller) unreported(b *binding, works []*workv1alpha1.Work) time.Duration {
	var wait time.Duration
	now := c.now()
	pending := func(cluster string, since time.Time) {
		if d := since.Add(c.lags.grace(cluster, now)).Sub(now); d > wait && c.clusterReady(cluster) {
			wait = d
		}
	}
	present := map[string]bool{}
	for _, w := range works {
		cluster, _ := names.ClusterOf(w.Namespace)
		present[cluster] = true
		if w.DeletionTimestamp != nil || ptr.Deref(w.Spec.SuspendDispatching, false) ||
			meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied) != nil {
			continue
		}
		pending(cluster, w.CreationTimestamp.Time)
	}
	scheduled := b.meta.CreationTimestamp.Time
	if cond := meta.FindStatusCondition(b.status.Conditions, workv1alpha2.Scheduled); cond != nil && cond.LastTransitionTime.After(scheduled) {
		scheduled = cond.LastTransitionTime.Time
	}
	for _, tc := range b.spec.Clusters {
		if !present[tc.Name] {
			pending(tc.Name, scheduled)
		}
	}
	// An attached binding has no scheduling of its own: its clusters are
	// those of the bindings requiring it.
	for _, r := range b.spec.RequiredBy {
		for _, tc := range r.Clusters {
			if !present[tc.Name] {
				pending(tc.Name, scheduled)
			}
		}
	}
	return wait
}

// clusterReady tells whether the cluster exists and is Ready.
func (c *Controller) clusterReady(name string) bool {
	cluster, err := c.clusters.Get(name)
	return err == nil && meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}
