package dependencies

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/names"
)

// bindingAPI is how the sub-reconcilers read ResourceBindings (from the
// cache) and write them. A sub-reconciler sets only what it uses.
type bindingAPI struct {
	get    func(namespace, name string) (*workv1alpha2.ResourceBinding, error)
	list   func(namespace string, selector labels.Selector) ([]*workv1alpha2.ResourceBinding, error)
	create func(ctx context.Context, rb *workv1alpha2.ResourceBinding) error
	// patch merge-patches a binding.
	patch  func(ctx context.Context, namespace, name string, patch []byte) error
	delete func(ctx context.Context, namespace, name string) error
}

// reconcile syncs one depending binding: discoverReconciler lists what its
// template depends on, attachReconciler makes the attached binding of each
// require the binding's clusters, releaseReconciler frees the attached
// bindings it no longer depends on, and annotateReconciler records the
// dependencies on the binding. Each write is its own (a patch, skipped when
// there is nothing to change); the events sum the round up.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	rb, err := c.rbs.ResourceBindings(ns).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && rb.DeletionTimestamp != nil) {
		return c.release.reconcile(ctx, ns, name, nil)
	}
	if err != nil {
		return err
	}
	if !rb.Spec.PropagateDeps {
		if err := c.release.reconcile(ctx, ns, name, nil); err != nil {
			return err
		}
		_, err := c.annotate.reconcile(ctx, rb, nil)
		return err
	}
	tmpl, deps, err := c.discover.reconcile(ctx, rb)
	if err != nil {
		if tmpl != nil {
			c.event(templates.Ref(tmpl), corev1.EventTypeWarning, EventReasonGetDependenciesFailed, fmt.Sprintf("Get dependencies failed: %v", err))
		}
		return err
	}
	var errs []error
	synced := false
	keep := map[string]bool{}
	for _, d := range deps {
		keep[names.BindingName(d.Kind, d.Name)] = true
		wrote, err := c.attach.reconcile(ctx, rb, d)
		if err != nil {
			errs = append(errs, err)
		}
		synced = synced || wrote
	}
	if err := c.release.reconcile(ctx, ns, name, keep); err != nil {
		errs = append(errs, err)
	}
	annotated, err := c.annotate.reconcile(ctx, rb, deps)
	if err != nil {
		errs = append(errs, err)
	}
	if annotated && tmpl != nil {
		c.event(templates.Ref(tmpl), corev1.EventTypeNormal, EventReasonGetDependenciesSucceed, fmt.Sprintf("Get dependencies(%s) succeed.", describeDeps(deps)))
	}
	switch {
	case len(errs) > 0:
		c.event(rb, corev1.EventTypeWarning, EventReasonSyncScheduleResultToDependenciesFailed,
			fmt.Sprintf("Failed to sync schedule results to dependencies: %v", errors.Join(errs...)))
	case synced:
		c.event(rb, corev1.EventTypeNormal, EventReasonSyncScheduleResultToDependenciesSucceed, "Sync schedule results to dependencies succeed.")
	}
	return errors.Join(errs...)
}

func (c *Controller) event(obj runtime.Object, eventType, reason, msg string) {
	if c.recorder != nil {
		c.recorder.Event(obj, eventType, reason, msg)
	}
}

// describeDeps lists dependencies as "[Kind/namespace/name ...]".
func describeDeps(deps []dependency) string {
	s := make([]string, len(deps))
	for i, d := range deps {
		s[i] = d.Kind + "/" + d.Namespace + "/" + d.Name
	}
	return "[" + strings.Join(s, " ") + "]"
}
