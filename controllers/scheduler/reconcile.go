package scheduler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/placement"
	"github.com/flotilla-io/flotilla/telemetry"
)

// Event reasons, as Karmada records them on the binding and the template.
const (
	EventReasonScheduleBindingSucceed = "ScheduleBindingSucceed"
	EventReasonScheduleBindingFailed  = "ScheduleBindingFailed"
)

// target is one binding being scheduled, of either kind. Its parts point
// into the lister's object, which is never modified.
type target struct {
	obj    runtime.Object
	meta   *metav1.ObjectMeta
	spec   *workv1alpha2.ResourceBindingSpec
	status *workv1alpha2.ResourceBindingStatus
	// patch sends a merge patch to the binding, or with subresource
	// "status" to its status, and returns the written binding's metadata
	// (nil outside reconcile).
	patch func(ctx context.Context, patch []byte, subresource ...string) (metav1.Object, error)
}

// lookup reads the binding of key from the listers.
func (c *Controller) lookup(key string) (*target, error) {
	ns, name, isCluster, ok := names.ParseBindingKey(key)
	if !ok {
		return nil, fmt.Errorf("malformed key %q", key)
	}
	if isCluster {
		b, err := c.crbs.Get(name)
		if err != nil {
			return nil, err
		}
		return bindingOf(b), nil
	}
	b, err := c.rbs.ResourceBindings(ns).Get(name)
	if err != nil {
		return nil, err
	}
	return bindingOf(b), nil
}

// get is lookup with the patch that writes the binding.
func (c *Controller) get(key string) (*target, error) {
	t, err := c.lookup(key)
	if err != nil {
		return nil, err
	}
	ns, name := t.meta.Namespace, t.meta.Name
	opts := metav1.PatchOptions{FieldManager: ControllerName}
	t.patch = func(ctx context.Context, p []byte, subresource ...string) (metav1.Object, error) {
		if ns == "" {
			return c.client.WorkV1alpha2().ClusterResourceBindings().Patch(ctx, name, types.MergePatchType, p, opts, subresource...)
		}
		return c.client.WorkV1alpha2().ResourceBindings(ns).Patch(ctx, name, types.MergePatchType, p, opts, subresource...)
	}
	return t, nil
}

// reconcile makes the scheduling decision of one binding and writes it,
// in one request, when it differs from the stored one: spec.clusters, the
// applied placement and the scheduler's status through the scheduling
// subresource when the result changes, the status alone through the
// status subresource otherwise; guarded by the resourceVersion read, so a
// concurrent writer is never overwritten.
func (c *Controller) reconcile(ctx context.Context, key string) (err error) {
	t, err := c.get(key)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	_, quiet := c.quiet.LoadAndDelete(key)
	if _, ok := c.written.Pending(key, t.meta.ResourceVersion); ok {
		// Our last write has not reached the cache; its update event
		// queues the binding again. Deciding now would conflict.
		return nil
	}
	if !c.responsible(t) {
		return nil
	}
	// One scheduling attempt from here, observed as Karmada does: failed
	// when no decision could be made or written.
	var schedErr error
	start, scheduleType := time.Now(), scheduleTypeOf(t)
	defer func() { telemetry.ObserveSchedule(scheduleType, errors.Join(schedErr, err), start) }()
	clusters, err := c.clusters.List(labels.Everything())
	if err != nil {
		return err
	}
	slices.SortFunc(clusters, func(a, b *clusterv1alpha1.Cluster) int { return cmp.Compare(a.Name, b.Name) })
	fresh := rescheduleTriggered(t.spec.RescheduleTriggeredAt, t.status.LastScheduledTime, t.meta.Annotations[workv1alpha2.ObservedRescheduleTriggerAnnotation])
	applied, err := json.Marshal(t.spec.Placement)
	if err != nil {
		return err
	}
	if steady(t, fresh, string(applied)) {
		klog.FromContext(ctx).V(4).Info("Scheduling not needed: placement and replicas unchanged", "binding", key)
		return c.observe(ctx, t, key)
	}
	in := placement.Input{Spec: t.spec, Status: t.status, Clusters: clusters, Fresh: fresh, Estimate: c.estimator(t),
		Step: telemetry.ObserveScheduleStep}
	if in.Affinity, in.AntiAffinity, err = c.peers(t); err != nil {
		return err
	}
	dec, assumption, schedErr := c.scheduleAssuming(ctx, key, t, in)
	defer assumption.settle()
	if schedErr == nil {
		schedErr = c.checkQuotas(t, dec)
	}

	klog.FromContext(ctx).V(2).Info("Scheduling decision", "binding", key, "generation", t.meta.Generation, "fresh", fresh,
		"result", dec.Clusters, "err", schedErr, "considered", dec.Considered)
	cond := metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue,
		Reason: workv1alpha2.BindingReasonSuccess, Message: scheduledMessage, ObservedGeneration: t.meta.Generation}
	var se *placement.Error
	switch {
	case schedErr == nil:
	case errors.As(schedErr, &se):
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, se.Reason, se.Message
	default:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha2.BindingReasonSchedulerError, schedErr.Error()
	}
	// Like Karmada, a placement no cluster fits is a result too: the
	// binding leaves every cluster. Other failures keep the current result.
	noFit := se != nil && se.Reason == workv1alpha2.BindingReasonNoClusterFit
	if c.upToDate(t, dec, schedErr == nil, noFit, string(applied), &cond) {
		if schedErr == nil && !quiet && rerun(t, fresh) {
			// Karmada schedules such a binding again on every trigger and
			// stamps each successful run, unchanged result or not; scripts
			// wait for lastScheduledTime to move. The status alone.
			return c.stampRun(ctx, t, key, dec, fresh)
		}
		klog.FromContext(ctx).V(4).Info("Scheduling decision unchanged", "binding", key)
		return c.retryLater(key, schedErr)
	}
	// One write: the result (spec.clusters and the applied placement),
	// when it changes, with the status through the scheduling subresource
	// (which moves the generation this status observes when the clusters
	// change); the status alone through the status subresource.
	conditions := slices.Clone(t.status.Conditions)
	cond.LastTransitionTime = metav1.NewTime(c.now())
	status := map[string]any{}
	if schedErr == nil {
		// A failure leaves the observed generation behind: scheduling of
		// this generation is still pending (Karmada's meaning).
		status["schedulerObservedGeneration"] = t.meta.Generation
		status["lastScheduledTime"] = c.runTime(t, fresh)
		var affinity any
		if dec.AffinityName != "" {
			affinity = dec.AffinityName
		}
		status["schedulerObservingAffinityName"] = affinity
	}
	meta.SetStatusCondition(&conditions, cond)
	status["conditions"] = conditions
	annotations := map[string]any{}
	if schedErr == nil && fresh {
		annotations[workv1alpha2.ObservedRescheduleTriggerAnnotation] = triggerValue(t.spec.RescheduleTriggeredAt)
	}
	metadata := map[string]any{"resourceVersion": t.meta.ResourceVersion}
	write := map[string]any{"metadata": metadata, "status": status}
	subresource := "status"
	if (schedErr == nil || noFit) && (!sameClusters(t.spec.Clusters, dec.Clusters) || t.meta.Annotations[workv1alpha2.AppliedPlacementAnnotation] != string(applied)) {
		var clusters any // null clears the field
		if len(dec.Clusters) > 0 {
			clusters = dec.Clusters
		}
		annotations[workv1alpha2.AppliedPlacementAnnotation] = string(applied)
		write["spec"] = map[string]any{"clusters": clusters}
		subresource = workv1alpha2.SchedulingSubresource
	}
	if len(annotations) > 0 {
		metadata["annotations"] = annotations
	}
	patch, err := json.Marshal(write)
	if err != nil {
		return err
	}
	if _, err := t.patch(ctx, patch, subresource); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		if placement.IsQuotaRefusal(err) {
			return c.quotaRefused(ctx, t, key, dec, err)
		}
		return fmt.Errorf("writing the scheduling decision: %w", err)
	}
	c.written.Record(key, t.meta.ResourceVersion, struct{}{})
	if subresource == workv1alpha2.SchedulingSubresource {
		assumption.wrote()
	}
	c.record(t, dec, schedErr)
	return c.retryLater(key, schedErr)
}

// patchStatus merges status into the binding's status subresource, on
// condition that the binding is still at resourceVersion rv; annotations,
// when given, are merged into its metadata in the same write.
func (c *Controller) patchStatus(ctx context.Context, t *target, rv string, status map[string]any, annotations ...map[string]any) error {
	metadata := map[string]any{"resourceVersion": rv}
	if len(annotations) > 0 && len(annotations[0]) > 0 {
		metadata["annotations"] = annotations[0]
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata, "status": status})
	if err != nil {
		return err
	}
	_, err = t.patch(ctx, patch, "status")
	return err
}

// rescheduleTriggered tells whether the binding's spec.rescheduleTriggeredAt
// asks for a Fresh run: a trigger after the last run (Karmada's rule), or
// in the same second as the last run and not yet run for (observed is the
// ObservedRescheduleTriggerAnnotation). Both times are whole seconds; a
// trigger before the last run is past.
func rescheduleTriggered(trigger, last *metav1.Time, observed string) bool {
	switch {
	case trigger == nil:
		return false
	case last == nil || last.Truncate(time.Second).Before(trigger.Truncate(time.Second)):
		return true
	}
	return last.Truncate(time.Second).Equal(trigger.Truncate(time.Second)) && observed != triggerValue(trigger)
}

// triggerValue is the ObservedRescheduleTriggerAnnotation of trigger.
func triggerValue(trigger *metav1.Time) string {
	return trigger.UTC().Format(time.RFC3339)
}

// scheduledMessage is the Scheduled condition's message on success.
const scheduledMessage = "Binding has been scheduled successfully."

// steady tells whether Karmada's scheduler would leave the binding as it
// is ("Don't need to schedule"): a Divided workload already scheduled
// without a failure, its placement the one applied, its clusters holding
// all its replicas, and no reschedule triggered since its last run. So
// cluster changes alone (a member back from an outage or failover, a new
// member) do not move its replicas; a WorkloadRebalancer does. Bindings
// with components are always scheduled.
func steady(t *target, fresh bool, applied string) bool {
	rs := t.spec.Placement.ReplicaScheduling
	if fresh || t.spec.Replicas == 0 || len(t.spec.Clusters) == 0 || len(t.spec.Components) > 0 ||
		rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated ||
		t.meta.Annotations[workv1alpha2.AppliedPlacementAnnotation] != applied {
		return false
	}
	if cond := meta.FindStatusCondition(t.status.Conditions, workv1alpha2.Scheduled); cond == nil || cond.Status != metav1.ConditionTrue ||
		cond.Reason != workv1alpha2.BindingReasonSuccess || cond.Message != scheduledMessage {
		return false
	}
	observed := t.status.SchedulerObservedAffinityName
	if terms := t.spec.Placement.ClusterAffinities; observed != "" && !slices.ContainsFunc(terms, func(term policyv1alpha1.ClusterAffinityTerm) bool {
		return term.AffinityName == observed
	}) || observed == "" && len(terms) > 0 {
		return false
	}
	var assigned int32
	for _, tc := range t.spec.Clusters {
		assigned += tc.Replicas
	}
	return assigned == t.spec.Replicas
}

// observe records, for a binding left as it is (steady), that its
// generation needs no scheduling, as Karmada does: the observed
// generation alone, when behind.
func (c *Controller) observe(ctx context.Context, t *target, key string) error {
	if t.status.SchedulerObservedGeneration == t.meta.Generation {
		return nil
	}
	if err := c.patchStatus(ctx, t, t.meta.ResourceVersion, map[string]any{"schedulerObservedGeneration": t.meta.Generation}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writing the observed generation: %w", err)
	}
	c.written.Record(key, t.meta.ResourceVersion, struct{}{})
	return nil
}

// rerun tells whether Karmada's scheduler would run again for a binding
// whose stored result is up to date, and so stamp the run: a reschedule
// triggered after the last run, a workload without replicas or a
// Duplicated placement (Karmada schedules these on every trigger). A
// Divided workload whose placement and replicas are unchanged is not run
// again there, and is not stamped here either.
func rerun(t *target, fresh bool) bool {
	if fresh || t.spec.Replicas == 0 {
		return true
	}
	rs := t.spec.Placement.ReplicaScheduling
	return rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated
}

// runTime is the lastScheduledTime of a successful run: now, or for a run
// a trigger asked for, not before that trigger (whose writer's clock may be
// ahead of this one): a run stamped before it would leave the trigger fresh
// and run again until the clock passed it, and scripts compare the two.
func (c *Controller) runTime(t *target, fresh bool) metav1.Time {
	now := metav1.NewTime(c.now())
	if fresh && now.Before(t.spec.RescheduleTriggeredAt) {
		return *t.spec.RescheduleTriggeredAt.DeepCopy()
	}
	return now
}

// stampRun writes the time and generation of a successful run whose result
// the binding already holds (and, for a run a trigger asked for, that
// trigger as observed), and records its events, as every successful
// scheduling run does.
func (c *Controller) stampRun(ctx context.Context, t *target, key string, dec placement.Decision, fresh bool) error {
	annotations := map[string]any{}
	if fresh {
		annotations[workv1alpha2.ObservedRescheduleTriggerAnnotation] = triggerValue(t.spec.RescheduleTriggeredAt)
	}
	err := c.patchStatus(ctx, t, t.meta.ResourceVersion, map[string]any{
		"schedulerObservedGeneration": t.meta.Generation,
		"lastScheduledTime":           c.runTime(t, fresh),
	}, annotations)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writing the scheduling time: %w", err)
	}
	c.written.Record(key, t.meta.ResourceVersion, struct{}{})
	c.record(t, dec, nil)
	return nil
}

// checkQuotas refuses a decision that would take the binding's namespace
// beyond the overall limit of a FederatedResourceQuota (Karmada's
// FederatedQuotaEnforcement): what its clusters take at its replica
// requirements (placement.BindingUsage), on top of what the namespace's
// other scheduled bindings use. A decision that raises no use always
// passes. It only spares a write flotilla-apiserver would refuse (see
// quotaRefused), from the cache, which may be behind.
func (c *Controller) checkQuotas(t *target, dec placement.Decision) error {
	ns := t.meta.Namespace
	if ns == "" {
		return nil
	}
	quotas, err := c.quotas.FederatedResourceQuotas(ns).List(labels.Everything())
	if err != nil || len(quotas) == 0 {
		return nil
	}
	overalls := make(map[string]corev1.ResourceList, len(quotas))
	for _, q := range quotas {
		overalls[q.Name] = q.Spec.Overall
	}
	return placement.CheckQuotas(ns, t.spec, dec.Clusters, overalls, func() (corev1.ResourceList, error) {
		bindings, err := c.rbs.ResourceBindings(ns).List(labels.Everything())
		if err != nil {
			return nil, err
		}
		var used []corev1.ResourceList
		for _, b := range bindings {
			if b.Name != t.meta.Name {
				used = append(used, placement.BindingUsage(&b.Spec, b.Spec.Clusters))
			}
		}
		return placement.Add(used...), nil
	})
}

// peers finds where the other ResourceBindings of the binding's namespace
// that share its workload affinity or anti-affinity group run.
func (c *Controller) peers(t *target) (affinity, antiAffinity map[string]bool, err error) {
	g := t.spec.WorkloadAffinityGroups
	if g == nil || t.meta.Namespace == "" {
		return nil, nil, nil
	}
	list, err := c.rbs.ResourceBindings(t.meta.Namespace).List(labels.Everything())
	if err != nil {
		return nil, nil, err
	}
	affinity, antiAffinity = placement.Peers(t.meta.Name, g, slices.Values(list))
	return affinity, antiAffinity, nil
}

// responsible tells whether the binding is this scheduler's to place now.
func (c *Controller) responsible(t *target) bool {
	if t.meta.DeletionTimestamp != nil || t.spec.Placement == nil {
		return false
	}
	if n := t.spec.SchedulerName; n != "" && n != DefaultSchedulerName {
		return false
	}
	s := t.spec.Suspension
	return s == nil || s.Scheduling == nil || !*s.Scheduling
}

// upToDate tells whether the stored binding already holds the decision.
func (c *Controller) upToDate(t *target, dec placement.Decision, ok, noFit bool, applied string, cond *metav1.Condition) bool {
	old := meta.FindStatusCondition(t.status.Conditions, workv1alpha2.Scheduled)
	if old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message {
		return false
	}
	if noFit {
		return len(t.spec.Clusters) == 0 && t.meta.Annotations[workv1alpha2.AppliedPlacementAnnotation] == applied
	}
	if !ok {
		return true
	}
	if t.status.SchedulerObservedGeneration != t.meta.Generation {
		return false
	}
	return t.meta.Annotations[workv1alpha2.AppliedPlacementAnnotation] == applied &&
		t.status.SchedulerObservedAffinityName == dec.AffinityName &&
		sameClusters(t.spec.Clusters, dec.Clusters)
}

func sameClusters(a, b []workv1alpha2.TargetCluster) bool {
	return slices.EqualFunc(a, b, func(a, b workv1alpha2.TargetCluster) bool {
		return a.Name == b.Name && a.Replicas == b.Replicas && slices.Equal(a.Components, b.Components)
	})
}

// retryLater tries an unschedulable binding again after a while; cluster
// changes try it sooner.
func (c *Controller) retryLater(key string, schedErr error) error {
	if schedErr != nil {
		telemetry.CountSchedulerQueueIncoming(telemetry.EventScheduleAttemptFailure)
		c.queue.AddAfter(key, retryUnschedulable)
	}
	return nil
}

// scheduleTypeOf is Karmada's kind of a scheduling attempt: the first for
// a binding without clusters, a scale when a divided binding's replicas
// differ from those assigned, a reconcile otherwise.
func scheduleTypeOf(t *target) string {
	if len(t.spec.Clusters) == 0 {
		return telemetry.ScheduleTypeFirst
	}
	if p := t.spec.Placement; p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided {
		var assigned int32
		for _, tc := range t.spec.Clusters {
			assigned += tc.Replicas
		}
		if assigned != t.spec.Replicas {
			return telemetry.ScheduleTypeScale
		}
	}
	return telemetry.ScheduleTypeReconcile
}

// record writes the decision's events on the binding and its template.
func (c *Controller) record(t *target, dec placement.Decision, schedErr error) {
	ref := t.spec.Resource.EventTarget()
	if schedErr != nil {
		c.recorder.Event(t.obj, corev1.EventTypeWarning, EventReasonScheduleBindingFailed, schedErr.Error())
		c.recorder.Event(ref, corev1.EventTypeWarning, EventReasonScheduleBindingFailed, schedErr.Error())
		return
	}
	parts := make([]string, 0, len(dec.Clusters))
	for _, tc := range dec.Clusters {
		parts = append(parts, fmt.Sprintf("%s:%d", tc.Name, tc.Replicas))
	}
	msg := fmt.Sprintf("Binding has been scheduled successfully. Result: {%s}", strings.Join(parts, ", "))
	c.recorder.Event(t.obj, corev1.EventTypeNormal, EventReasonScheduleBindingSucceed, msg)
	c.recorder.Event(ref, corev1.EventTypeNormal, EventReasonScheduleBindingSucceed, msg)
}
