package binding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/controllers/internal/names"
	"github.com/flotilla-io/flotilla/controllers/internal/templates"
	"github.com/flotilla-io/flotilla/controllers/internal/works"
)

// maxConcurrentWorkWrites bounds the Work writes one binding has in flight.
const maxConcurrentWorkWrites = 16

// Event reasons (Karmada's).
const (
	EventReasonSyncWorkSucceed = "SyncWorkSucceed"
	// EventReasonCleanupWorkFailed: the Works of a binding being deleted
	// could not be removed.
	EventReasonCleanupWorkFailed = "CleanupWorkFailed"
	EventReasonSyncWorkFailed    = "SyncWorkFailed"
)

func (c *Controller) reconcile(ctx context.Context, key string) error {
	var (
		b        *bindingView
		obj      runtime.Object
		deleting bool
		fin      []string
	)
	ns, name, cluster, ok := names.ParseBindingKey(key)
	if !ok {
		return nil
	}
	if cluster {
		crb, err := c.crbs.Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		b = &bindingView{cluster: true, name: crb.Name, id: crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel], spec: &crb.Spec}
		obj, deleting, fin = crb, crb.DeletionTimestamp != nil, crb.Finalizers
	} else {
		rb, err := c.rbs.ResourceBindings(ns).Get(name)
		if apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		b = &bindingView{namespace: rb.Namespace, name: rb.Name, id: rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel], spec: &rb.Spec}
		obj, deleting, fin = rb, rb.DeletionTimestamp != nil, rb.Finalizers
	}
	if b.id == "" {
		return nil
	}
	existing, err := c.works.ByIndex(worksByBinding, b.id)
	if err != nil {
		return err
	}
	if deleting {
		err := c.finalize(ctx, b, existing, fin)
		if err != nil {
			c.recorder.Event(obj, corev1.EventTypeWarning, EventReasonCleanupWorkFailed, fmt.Sprintf("Failed to clean up the works of %s: %v", b.describe(), err))
		}
		return err
	}
	gvk := gvkOf(b.spec.Resource)
	template, err := c.templates.Get(ctx, gvk, b.spec.Resource.Namespace, b.spec.Resource.Name)
	if errors.Is(err, templates.ErrNotWatched) || apierrors.IsNotFound(err) {
		// The detector deletes bindings of templates that are gone.
		return nil
	} else if err != nil {
		return err
	}
	if uid := b.spec.Resource.UID; uid != "" && uid != template.GetUID() {
		return nil
	}
	wrote, err := c.syncWorks(ctx, b, template, existing)
	ref := templateRef(template)
	if err != nil {
		c.recorder.Event(ref, corev1.EventTypeWarning, EventReasonSyncWorkFailed, fmt.Sprintf("Failed to sync work of %s: %v", b.describe(), err))
		c.recorder.Event(obj, corev1.EventTypeWarning, EventReasonSyncWorkFailed, err.Error())
		return err
	}
	if wrote {
		msg := fmt.Sprintf("Sync work of %s successful.", b.describe())
		c.recorder.Event(ref, corev1.EventTypeNormal, EventReasonSyncWorkSucceed, msg)
		c.recorder.Event(obj, corev1.EventTypeNormal, EventReasonSyncWorkSucceed, msg)
	}
	return nil
}

func (b *bindingView) describe() string {
	if b.cluster {
		return fmt.Sprintf("clusterResourceBinding(%s)", b.name)
	}
	return fmt.Sprintf("resourceBinding(%s/%s)", b.namespace, b.name)
}

func (c *Controller) templateEvent(template *unstructured.Unstructured, e overrideEvent) {
	c.recorder.Event(templateRef(template), e.eventType, e.reason, e.message)
}

func templateRef(obj *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(),
		Name: obj.GetName(), UID: obj.GetUID()}
}

// syncWorks writes the Work of every target cluster and deletes the Works
// of clusters no longer targeted; wrote tells whether anything was written.
func (c *Controller) syncWorks(ctx context.Context, b *bindingView, template *unstructured.Unstructured, existing []any) (bool, error) {
	stored := map[string]*workv1alpha1.Work{} // by namespace
	for _, o := range existing {
		w := o.(*workv1alpha1.Work)
		stored[w.Namespace] = w
	}
	keep := map[string]bool{}
	for _, t := range b.spec.GracefulEvictionTasks {
		// Works of clusters being evicted stay until the eviction is done.
		keep[names.ExecutionNamespace(t.FromCluster)] = true
	}
	var completions map[string]int32
	if isJob(template.GroupVersionKind()) && divided(b.spec.Placement) && c.completions != nil {
		if n, ok, _ := unstructured.NestedInt64(template.Object, "spec", "completions"); ok && n > 0 {
			completions = c.completions(int32(n), b.spec.Clusters, string(template.GetUID()))
		}
	}
	// The Works are built here and written concurrently: a binding's
	// writes do not depend on each other, and one round trip instead of
	// one per cluster keeps the binding's latency flat in the number of
	// clusters when the server is busy.
	var (
		mu     sync.Mutex
		wrote  bool
		errs   []error
		writes errgroup.Group
	)
	writes.SetLimit(maxConcurrentWorkWrites)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// write runs op, which says whether it wrote.
	write := func(op func() (bool, error)) {
		writes.Go(func() error {
			did, err := op()
			if err != nil {
				fail(err)
				return nil
			}
			if did {
				mu.Lock()
				wrote = true
				mu.Unlock()
			}
			return nil
		})
	}
	for _, target := range targets(b.spec) {
		ns := names.ExecutionNamespace(target.Name)
		keep[ns] = true
		cluster, err := c.clusters.Get(target.Name)
		if err != nil {
			fail(fmt.Errorf("cluster %s: %w", target.Name, err))
			continue
		}
		if cluster.DeletionTimestamp != nil {
			continue
		}
		cur := stored[ns]
		id := ""
		if cur != nil {
			id = cur.Labels[workv1alpha2.WorkPermanentIDLabel]
		}
		desired, err := c.buildWork(b, template, target, cluster, completions, id)
		if oe := (*overrideError)(nil); errors.As(err, &oe) {
			c.templateEvent(template, overrideFailedEvent(oe.cluster, oe.err))
		}
		if err != nil {
			fail(err)
			continue
		}
		if works.Needless(cur, desired) {
			continue
		}
		write(func() (bool, error) {
			if err := works.Write(ctx, c.client, cur, desired, ""); err != nil {
				return false, err
			}
			// The overrides are reported when they reach a Work.
			for _, e := range appliedOverrideEvents(desired.Annotations, template.GetNamespace(), target.Name) {
				c.templateEvent(template, e)
			}
			return true, nil
		})
	}
	for ns, w := range stored {
		if keep[ns] || w.DeletionTimestamp != nil {
			continue
		}
		write(func() (bool, error) {
			if err := c.client.WorkV1alpha1().Works(ns).Delete(ctx, w.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			klog.FromContext(ctx).V(2).Info("Deleted Work of a cluster no longer targeted", "work", klog.KObj(w), "binding", b.describe())
			return true, nil
		})
	}
	_ = writes.Wait()
	return wrote, errors.Join(errs...)
}

// finalize deletes the Works of a binding being deleted and drops its
// finalizer once they are gone.
func (c *Controller) finalize(ctx context.Context, b *bindingView, existing []any, finalizers []string) error {
	for _, o := range existing {
		w := o.(*workv1alpha1.Work)
		if w.DeletionTimestamp != nil {
			continue
		}
		if err := c.client.WorkV1alpha1().Works(w.Namespace).Delete(ctx, w.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	if len(existing) > 0 {
		// Each Work's deletion re-queues the binding.
		return nil
	}
	fin := workv1alpha2.BindingControllerFinalizer
	if b.cluster {
		fin = workv1alpha2.ClusterResourceBindingControllerFinalizer
	}
	if !hasString(finalizers, fin) {
		return nil
	}
	var keep []string
	for _, f := range finalizers {
		if f != fin {
			keep = append(keep, f)
		}
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": keep}})
	var err error
	if b.cluster {
		_, err = c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, b.name, types.MergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = c.client.WorkV1alpha2().ResourceBindings(b.namespace).Patch(ctx, b.name, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (c *Controller) clusterOverrides() []*policyv1alpha1.ClusterOverridePolicy {
	list, _ := c.cops.List(labels.Everything())
	return list
}

func (c *Controller) namespaceOverrides(ns string) []*policyv1alpha1.OverridePolicy {
	if ns == "" {
		return nil
	}
	list, _ := c.ops.OverridePolicies(ns).List(labels.Everything())
	return list
}

// targets are the clusters a binding propagates to: its own scheduling
// result plus, for an attached binding, the clusters of every binding that
// requires it.
func targets(spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.TargetCluster {
	out := append([]workv1alpha2.TargetCluster(nil), spec.Clusters...)
	seen := map[string]bool{}
	for _, t := range out {
		seen[t.Name] = true
	}
	for _, r := range spec.RequiredBy {
		for _, t := range r.Clusters {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, workv1alpha2.TargetCluster{Name: t.Name})
			}
		}
	}
	return out
}
