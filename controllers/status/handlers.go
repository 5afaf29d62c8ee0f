package status

import (
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

// workBindingIndex indexes Works by the binding they belong to: by
// "<permanent-id label>=<id>" and by the binding's queue key from the
// Work's annotations. Bindings select their Works by permanent id, as
// Karmada does, so Works left by an earlier binding of the same name are not
// counted; a binding without the label falls back to its name.
const workBindingIndex = "status.flotilla.io/binding"

func indexWorkByBinding(obj any) ([]string, error) {
	w, ok := obj.(*workv1alpha1.Work)
	if !ok {
		return nil, nil
	}
	var values []string
	for _, label := range []string{workv1alpha2.ResourceBindingPermanentIDLabel, workv1alpha2.ClusterResourceBindingPermanentIDLabel} {
		if id := w.Labels[label]; id != "" {
			values = append(values, label+"="+id)
		}
	}
	if key, ok := bindingKeyOfWork(w); ok {
		values = append(values, key)
	}
	return values, nil
}

// worksIndexValue is the workBindingIndex value of b's Works.
func worksIndexValue(b *binding) string {
	if id := b.meta.Labels[b.idLabel]; id != "" {
		return b.idLabel + "=" + id
	}
	return b.key
}

// bindingKeyOfWork returns the queue key of the binding a Work belongs to,
// from the Work's binding annotations.
func bindingKeyOfWork(w *workv1alpha1.Work) (string, bool) {
	a := w.Annotations
	if ns, name := a[workv1alpha2.ResourceBindingNamespaceAnnotationKey], a[workv1alpha2.ResourceBindingNameAnnotationKey]; ns != "" && name != "" {
		return rbKey(ns, name), true
	}
	if name := a[workv1alpha2.ClusterResourceBindingAnnotationKey]; name != "" {
		return crbKey(name), true
	}
	return "", false
}

// workOf returns the Work of an event object, unwrapping tombstones.
func workOf(obj any) (*workv1alpha1.Work, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	w, ok := obj.(*workv1alpha1.Work)
	return w, ok
}

// workStatusCoalesce is how long a Work status change waits for the other
// Works of its binding before the binding's status is written.
const workStatusCoalesce = 200 * time.Millisecond

// onWork enqueues the binding of an added or deleted Work.
func (c *Controller) onWork(obj any) {
	if w, ok := workOf(obj); ok {
		if key, ok := bindingKeyOfWork(w); ok {
			c.queue.Add(key)
		}
	}
}

// onWorkUpdate enqueues the binding of a Work whose spec, status, binding
// or deletion changed; a Work moved to another binding enqueues both.
func (c *Controller) onWorkUpdate(oldObj, curObj any) {
	old, ok1 := workOf(oldObj)
	cur, ok2 := workOf(curObj)
	if !ok1 || !ok2 {
		return
	}
	if old.Generation == cur.Generation && (old.DeletionTimestamp == nil) == (cur.DeletionTimestamp == nil) &&
		apiequality.Semantic.DeepEqual(old.Labels, cur.Labels) && apiequality.Semantic.DeepEqual(old.Annotations, cur.Annotations) &&
		apiequality.Semantic.DeepEqual(old.Status, cur.Status) && apiequality.Semantic.DeepEqual(old.Spec, cur.Spec) {
		return
	}
	if applied := meta.FindStatusCondition(cur.Status.Conditions, workv1alpha1.WorkApplied); applied != nil &&
		meta.FindStatusCondition(old.Status.Conditions, workv1alpha1.WorkApplied) == nil {
		if cluster, ok := names.ClusterOf(cur.Namespace); ok {
			c.lags.observe(cluster, applied.LastTransitionTime.Sub(cur.CreationTimestamp.Time), c.now())
		}
	}
	oldKey, _ := bindingKeyOfWork(old)
	if key, ok := bindingKeyOfWork(cur); ok {
		// The Works of a binding report within moments of each other:
		// waiting a little turns their reports into one status write.
		c.queue.AddAfter(key, workStatusCoalesce)
	}
	if oldKey != "" {
		c.queue.Add(oldKey)
	}
}

// bindingParts returns the queue key, spec and status of a binding event object.
func bindingParts(obj any) (string, *workv1alpha2.ResourceBindingSpec, *workv1alpha2.ResourceBindingStatus, map[string]string, bool) {
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		return rbKey(b.Namespace, b.Name), &b.Spec, &b.Status, b.Labels, true
	case *workv1alpha2.ClusterResourceBinding:
		return crbKey(b.Name), &b.Spec, &b.Status, b.Labels, true
	}
	return "", nil, nil, nil, false
}

// onBinding enqueues an added binding, so the status is caught up after a
// restart; a binding whose status is current costs no write.
func (c *Controller) onBinding(obj any) {
	if key, _, _, _, ok := bindingParts(obj); ok {
		c.queue.Add(key)
	}
}

// onBindingUpdate enqueues a binding whose spec (scheduled clusters,
// template) or permanent id changed, or whose aggregated status or
// FullyApplied condition was changed by someone else.
func (c *Controller) onBindingUpdate(oldObj, curObj any) {
	key, oldSpec, oldStatus, oldLabels, ok1 := bindingParts(oldObj)
	_, curSpec, curStatus, curLabels, ok2 := bindingParts(curObj)
	if !ok1 || !ok2 {
		return
	}
	idChanged := oldLabels[workv1alpha2.ResourceBindingPermanentIDLabel] != curLabels[workv1alpha2.ResourceBindingPermanentIDLabel] ||
		oldLabels[workv1alpha2.ClusterResourceBindingPermanentIDLabel] != curLabels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]
	statusChanged := !itemsEqual(oldStatus.AggregatedStatus, curStatus.AggregatedStatus) ||
		!conditionEqual(meta.FindStatusCondition(oldStatus.Conditions, workv1alpha2.FullyApplied), meta.FindStatusCondition(curStatus.Conditions, workv1alpha2.FullyApplied))
	if idChanged || statusChanged || !apiequality.Semantic.DeepEqual(oldSpec, curSpec) {
		c.queue.Add(key)
	}
}
