package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

// reconcile brings one Work of member m about: it releases the Work's
// member objects when it is deleted, otherwise applies its manifests and
// writes its status (in one write, only when it changed).
func (c *Controller) reconcile(ctx context.Context, m *memberState, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	work, err := c.works.Works(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("work", klog.KObj(work)))

	cluster, err := c.clusters.Get(m.name)
	if apierrors.IsNotFound(err) {
		// The cluster is gone, and with it any way to clean up after the Work.
		if work.DeletionTimestamp != nil {
			return c.removeFinalizer(ctx, m, work)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !c.serves(cluster.Name) {
		return nil
	}
	if work.DeletionTimestamp != nil {
		return c.finalize(ctx, m, cluster, work, key)
	}
	if work.Labels[workv1alpha1.PropagationInstruction] == workv1alpha1.PropagationInstructionSuppressed {
		return nil
	}
	if err := c.ensureFinalizer(ctx, work); err != nil {
		return err
	}

	stored := m.records.freshStatus(work)
	status := stored.DeepCopy()
	suspended := ptr.Deref(work.Spec.SuspendDispatching, false)
	dispatching := setDispatching(status, suspended)
	if suspended || !clusterReady(cluster) {
		if !suspended {
			m.queue.AddAfter(key, c.opts.NotReadyRetry)
		}
		return c.writeStatus(ctx, m, work, stored, status, dispatching)
	}
	client, err := c.memberClient(cluster)
	if err != nil {
		return fmt.Errorf("building the client of cluster %s: %w", cluster.Name, err)
	}
	outcomes := c.apply(ctx, m, client, cluster.Name, work)
	applyErr := setApplied(status, outcomes)
	status.ManifestStatuses = c.manifestStatuses(ctx, work, outcomes)
	writeErr := c.writeStatus(ctx, m, work, stored, status, dispatching)
	c.recordApplyEvents(work, cluster.Name, outcomes, applyErr)
	return errors.Join(applyErr, writeErr)
}

// finalize deletes the Work's objects from the member, or releases them
// when the Work preserves them, then removes the Work's finalizer. A member
// that is not Ready is waited for, unless it is being removed.
func (c *Controller) finalize(ctx context.Context, m *memberState, cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work, key string) error {
	if !slices.Contains(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		m.records.forgetWork(work.UID)
		return nil
	}
	if clusterReady(cluster) {
		client, err := c.memberClient(cluster)
		if err != nil {
			return fmt.Errorf("building the client of cluster %s: %w", cluster.Name, err)
		}
		if err := c.cleanup(ctx, client, work); err != nil {
			return err
		}
	} else if cluster.DeletionTimestamp == nil {
		klog.FromContext(ctx).V(2).Info("Cluster not ready; deferring the cleanup of the deleted Work")
		m.queue.AddAfter(key, c.opts.NotReadyRetry)
		return nil
	}
	return c.removeFinalizer(ctx, m, work)
}

// ensureFinalizer adds the execution finalizer to a Work that lacks it, so
// that the Work's member objects are cleaned up when it is deleted. The
// binding controller creates Works with it; this covers Works made by hand.
func (c *Controller) ensureFinalizer(ctx context.Context, work *workv1alpha1.Work) error {
	if slices.Contains(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers":      append(slices.Clone(work.Finalizers), workv1alpha1.ExecutionControllerFinalizer),
		"resourceVersion": work.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	_, err = c.client.WorkV1alpha1().Works(work.Namespace).Patch(ctx, work.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if err != nil {
		return fmt.Errorf("adding finalizer: %w", err)
	}
	return nil
}

// removeFinalizer removes the execution finalizer with a JSON patch that
// tests the entry it removes, so a concurrent change of the finalizers
// fails it rather than being lost.
func (c *Controller) removeFinalizer(ctx context.Context, m *memberState, work *workv1alpha1.Work) error {
	m.records.forgetWork(work.UID)
	i := slices.Index(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer)
	if i < 0 {
		return nil
	}
	path := fmt.Sprintf("/metadata/finalizers/%d", i)
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": path, "value": workv1alpha1.ExecutionControllerFinalizer},
		{"op": "remove", "path": path},
	})
	if err != nil {
		return err
	}
	_, err = c.client.WorkV1alpha1().Works(work.Namespace).Patch(ctx, work.Name, types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: ControllerName})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	return nil
}
