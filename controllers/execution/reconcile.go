package execution

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/interpreter"
	"github.com/flotilla-io/flotilla/telemetry"
)

// workPatchFunc patches a Work (its subresource, when named) with the
// controller's field manager and returns the Work the server stored.
type workPatchFunc func(ctx context.Context, work *workv1alpha1.Work, pt types.PatchType, data []byte, subresources ...string) (*workv1alpha1.Work, error)

// eventFunc records an event on obj.
type eventFunc func(obj runtime.Object, eventType, reason, message string)

// setReconcilers builds the process-wide sub-reconcilers over the loopback
// client (the Work patch), the interpreter and the recorder. Those reaching
// the objects of a member (applyReconciler, cleanupReconciler) are built
// per reconcile over the member's client (memberObjectsOf).
func (c *Controller) setReconcilers(client versioned.Interface, interp interpreter.Interpreter, recorder record.EventRecorder) {
	patch := func(ctx context.Context, work *workv1alpha1.Work, pt types.PatchType, data []byte, subresources ...string) (*workv1alpha1.Work, error) {
		return client.WorkV1alpha1().Works(work.Namespace).Patch(ctx, work.Name, pt, data, metav1.PatchOptions{FieldManager: ControllerName}, subresources...)
	}
	event := func(obj runtime.Object, eventType, reason, message string) {
		recorder.Event(obj, eventType, reason, message)
	}
	c.finalizer = finalizerReconciler{patch: patch}
	c.dispatch = dispatchReconciler{notReadyRetry: c.opts.NotReadyRetry}
	c.manifests = manifestsReconciler{
		reflect: interp.ReflectStatus,
		health: func(obj *unstructured.Unstructured) (workv1alpha1.ResourceHealth, bool, error) {
			if !interp.HookEnabled(obj.GroupVersionKind(), interpreter.InterpretHealth) {
				return "", false, nil
			}
			h, err := interp.InterpretHealth(obj)
			return workv1alpha1.ResourceHealth(h), true, err
		},
		event: event,
	}
	c.status = statusReconciler{patch: patch, event: event}
	c.events = eventsReconciler{event: event}
	c.retain = func(desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if !interp.HookEnabled(desired.GroupVersionKind(), interpreter.Retain) {
			return desired, nil
		}
		return interp.Retain(desired, observed)
	}
}

// reconcile brings one Work of member m about. A deleted Work has its
// member objects deleted or released (cleanupReconciler) and then its
// finalizer removed (finalizerReconciler). Otherwise the finalizer is
// ensured, dispatchReconciler decides whether the manifests go to the
// member now, applyReconciler writes each manifest that changed (none when
// its applied hash matches), manifestsReconciler reflects the member
// objects, statusReconciler writes the status in one patch (none when it is
// unchanged), and eventsReconciler reports the apply.
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
	if err := c.finalizer.ensure(ctx, work); err != nil {
		return err
	}

	stored := m.records.freshStatus(work)
	status := stored.DeepCopy()
	dispatch, dispatching, retry := c.dispatch.reconcile(work, cluster, status)
	if !dispatch {
		if retry > 0 {
			m.queue.AddAfter(key, retry)
		}
		return c.status.reconcile(ctx, m.records, work, stored, status, dispatching)
	}
	objects, err := c.memberObjectsOf(m, cluster)
	if err != nil {
		return err
	}
	apply := applyReconciler{objects: objects, records: m.records, retain: c.retain, applied: wasApplied(stored, work.Generation),
		mode: writeModeOf(work), recorded: stored.ManifestStatuses}
	start := time.Now()
	outcomes := apply.reconcile(ctx, cluster.Name, work)
	applyErr := setApplied(status, work.Generation, outcomes)
	telemetry.ObserveSyncWorkload(applyErr, start)
	setDrifted(status, work.Generation, outcomes, start)
	status.ManifestStatuses = c.manifests.reconcile(ctx, work, outcomes, stored.ManifestStatuses)
	writeErr := c.status.reconcile(ctx, m.records, work, stored, status, dispatching)
	c.events.reconcile(work, cluster.Name, outcomes, applyErr)
	c.events.driftEvents(work, cluster.Name, outcomes, stored.ManifestStatuses)
	return errors.Join(applyErr, writeErr)
}

// finalize deletes the Work's objects from the member, or releases them
// when the Work preserves them, then removes the Work's finalizer. A member
// that is not Ready is waited for, unless it is being removed.
func (c *Controller) finalize(ctx context.Context, m *memberState, cluster *clusterv1alpha1.Cluster, work *workv1alpha1.Work, key string) error {
	if !slices.Contains(work.Finalizers, workv1alpha1.ExecutionControllerFinalizer) {
		c.forgetWorkOf(m, work)
		return nil
	}
	if clusterReady(cluster) {
		objects, err := c.memberObjectsOf(m, cluster)
		if err != nil {
			return err
		}
		cleanup := cleanupReconciler{objects: objects}
		if err := cleanup.reconcile(ctx, work); err != nil {
			return err
		}
	} else if cluster.DeletionTimestamp == nil {
		klog.FromContext(ctx).V(2).Info("Cluster not ready; deferring the cleanup of the deleted Work")
		m.queue.AddAfter(key, c.opts.NotReadyRetry)
		return nil
	}
	return c.removeFinalizer(ctx, m, work)
}

// removeFinalizer forgets the records of a Work that goes and removes its
// finalizer.
func (c *Controller) removeFinalizer(ctx context.Context, m *memberState, work *workv1alpha1.Work) error {
	c.forgetWorkOf(m, work)
	return c.finalizer.remove(ctx, work)
}

// memberObjectsOf reaches the objects of cluster's member through its
// client.
func (c *Controller) memberObjectsOf(m *memberState, cluster *clusterv1alpha1.Cluster) (memberObjects, error) {
	client, err := c.memberClient(cluster)
	if err != nil {
		return memberObjects{}, fmt.Errorf("building the client of cluster %s: %w", cluster.Name, err)
	}
	return countWrites(m.name, c.newMemberObjects(m, client, c.opts.CacheSyncTimeout)), nil
}
