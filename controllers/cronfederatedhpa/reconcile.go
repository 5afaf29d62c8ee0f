package cronfederatedhpa

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/telemetry"
)

// reconcile plans the rules of a CronFederatedHPA, runs those that came
// due and records both in its status with at most one write. Executions
// whose status write fails are kept and recorded at the retry, not run
// again.
func (c *Controller) reconcile(ctx context.Context, key string) (err error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cron, err := c.lister.CronFederatedHPAs(ns).Get(name)
	if apierrors.IsNotFound(err) || (err == nil && cron.DeletionTimestamp != nil) {
		c.planner.forget(key)
		return nil
	}
	if err != nil {
		return err
	}
	start := time.Now()
	defer func() { telemetry.ObserveCronFederatedHPA(err, start) }()
	for _, perr := range c.planner.sync(key, cron.UID, cron.Spec.Rules) {
		c.recorder.Event(cron, corev1.EventTypeWarning, EventReasonStartRuleFailed, perr.Error())
	}

	outs := c.planner.unrecorded(key)
	ran := c.execute(ctx, cron, c.planner.takeDue(key))
	outs = append(outs, ran...)
	next := func(rule string) (time.Time, bool) { return c.planner.next(key, rule) }
	if err := c.writeStatus(ctx, cron, outs, next); err != nil {
		c.planner.setUnrecorded(key, outs)
		reason := EventReasonUpdateCronFederatedHPAFailed
		if len(outs) > 0 {
			reason = EventReasonUpdateStatusFailed
		}
		c.recorder.Event(cron, corev1.EventTypeWarning, reason, err.Error())
		return fmt.Errorf("writing the status of CronFederatedHPA %s: %w", key, err)
	}
	c.planner.setUnrecorded(key, nil)
	return nil
}

// execute runs the due executions of the rules of cron that still exist
// and are not suspended, with the rule as the spec has it now, and records
// an event for each.
func (c *Controller) execute(ctx context.Context, cron *autoscalingv1alpha1.CronFederatedHPA, due []execution) []outcome {
	log := klog.FromContext(ctx)
	var outs []outcome
	for _, x := range due {
		rule := ruleNamed(cron, x.rule)
		if rule == nil || (rule.Suspend != nil && *rule.Suspend) {
			continue
		}
		o := outcome{execution: x, executionTime: c.now()}
		o.applied, o.err = c.exec.execute(ctx, cron, rule)
		outs = append(outs, o)
		ref := cron.Spec.ScaleTargetRef
		if o.err != nil {
			log.Info("CronFederatedHPA rule failed", "cronFederatedHPA", klog.KObj(cron), "rule", x.rule, "err", o.err)
			c.recorder.Eventf(cron, corev1.EventTypeWarning, EventReasonScaleFailed, "Rule %s failed to scale %s %s/%s: %v",
				x.rule, ref.Kind, cron.Namespace, ref.Name, o.err)
			continue
		}
		log.V(2).Info("CronFederatedHPA rule executed", "cronFederatedHPA", klog.KObj(cron), "rule", x.rule, "scheduleTime", x.scheduleTime)
		c.recorder.Eventf(cron, corev1.EventTypeNormal, EventReasonScaleSucceed, "Rule %s set %s of %s %s/%s",
			x.rule, describeApplied(o.applied), ref.Kind, cron.Namespace, ref.Name)
	}
	return outs
}

func ruleNamed(cron *autoscalingv1alpha1.CronFederatedHPA, name string) *autoscalingv1alpha1.CronFederatedHPARule {
	for i := range cron.Spec.Rules {
		if cron.Spec.Rules[i].Name == name {
			return &cron.Spec.Rules[i]
		}
	}
	return nil
}

// describeApplied says what an execution set: "replicas to 5" or
// "minReplicas to 2, maxReplicas to 10".
func describeApplied(a autoscalingv1alpha1.SuccessfulExecution) string {
	var parts []string
	for _, f := range []struct {
		name  string
		value *int32
	}{{"replicas", a.AppliedReplicas}, {"minReplicas", a.AppliedMinReplicas}, {"maxReplicas", a.AppliedMaxReplicas}} {
		if f.value != nil {
			parts = append(parts, fmt.Sprintf("%s to %d", f.name, *f.value))
		}
	}
	return strings.Join(parts, ", ")
}
