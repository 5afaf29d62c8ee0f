package status

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
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
	logger := klog.FromContext(ctx).WithValues("binding", key)
	ctx = klog.NewContext(ctx, logger)

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
	items := aggregateItems(works, b.spec.Resource)

	if err := c.syncBindingStatus(ctx, b, tmpl.obj, items); err != nil {
		return err
	}
	return c.syncTemplateStatus(ctx, b, tmpl, items)
}
