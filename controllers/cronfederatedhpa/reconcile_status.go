package cronfederatedhpa

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// desiredStatus returns the status of cron with outs recorded. There is one
// history per rule of the spec: histories of removed rules are dropped,
// those of new rules appended in spec order, the others keep their place.
// Each nextExecutionTime comes from next (nil for a rule not planned, such
// as a suspended one). Executions are newest first, as Karmada prepends
// them, and trimmed to the rule's history limits. cron is not modified.
func desiredStatus(cron *autoscalingv1alpha1.CronFederatedHPA, outs []outcome, next func(rule string) (time.Time, bool)) autoscalingv1alpha1.CronFederatedHPAStatus {
	rules := map[string]*autoscalingv1alpha1.CronFederatedHPARule{}
	for i := range cron.Spec.Rules {
		rules[cron.Spec.Rules[i].Name] = &cron.Spec.Rules[i]
	}
	var hs []autoscalingv1alpha1.ExecutionHistory
	index := map[string]int{}
	for _, h := range cron.Status.ExecutionHistories {
		if _, seen := index[h.RuleName]; seen || rules[h.RuleName] == nil {
			continue
		}
		index[h.RuleName] = len(hs)
		hs = append(hs, *h.DeepCopy())
	}
	for _, r := range cron.Spec.Rules {
		if _, seen := index[r.Name]; !seen {
			index[r.Name] = len(hs)
			hs = append(hs, autoscalingv1alpha1.ExecutionHistory{RuleName: r.Name})
		}
	}

	outs = slices.Clone(outs)
	slices.SortStableFunc(outs, func(a, b outcome) int { return a.scheduleTime.Compare(b.scheduleTime) })
	for _, o := range outs {
		i, ok := index[o.rule]
		if !ok {
			continue // the rule went away: Karmada drops its record too
		}
		h := &hs[i]
		scheduled, executed := metav1.NewTime(o.scheduleTime), metav1.NewTime(o.executionTime)
		if o.err != nil {
			h.FailedExecutions = slices.Insert(h.FailedExecutions, 0, autoscalingv1alpha1.FailedExecution{
				ScheduleTime: &scheduled, ExecutionTime: &executed, Message: o.err.Error(),
			})
			continue
		}
		s := *o.applied.DeepCopy()
		s.ScheduleTime, s.ExecutionTime = &scheduled, &executed
		h.SuccessfulExecutions = slices.Insert(h.SuccessfulExecutions, 0, s)
	}

	for i := range hs {
		h, r := &hs[i], rules[hs[i].RuleName]
		h.NextExecutionTime = nil
		if t, ok := next(r.Name); ok {
			h.NextExecutionTime = &metav1.Time{Time: t}
		}
		h.SuccessfulExecutions = trim(h.SuccessfulExecutions, historyLimit(r.SuccessfulHistoryLimit))
		h.FailedExecutions = trim(h.FailedExecutions, historyLimit(r.FailedHistoryLimit))
	}
	return autoscalingv1alpha1.CronFederatedHPAStatus{ExecutionHistories: hs}
}

// historyLimit returns a rule's history limit; unset is the API default.
func historyLimit(limit *int32) int {
	if limit == nil {
		return int(autoscalingv1alpha1.DefaultHistoryLimit)
	}
	return max(int(*limit), 0)
}

// trim keeps the first limit entries of s (the newest); nil when none.
func trim[T any](s []T, limit int) []T {
	if len(s) > limit {
		s = s[:limit]
	}
	if len(s) == 0 {
		return nil
	}
	return s
}

// statusPatch is a merge patch setting the execution histories, with the
// resourceVersion they were computed from as a precondition: the list is
// replaced whole, so a write from a stale copy must fail, not drop records.
func statusPatch(resourceVersion string, st autoscalingv1alpha1.CronFederatedHPAStatus) ([]byte, error) {
	var hs any // null removes the field
	if len(st.ExecutionHistories) > 0 {
		hs = st.ExecutionHistories
	}
	p := map[string]any{"status": map[string]any{"executionHistories": hs}}
	if resourceVersion != "" {
		p["metadata"] = map[string]any{"resourceVersion": resourceVersion}
	}
	return json.Marshal(p)
}

// writeStatus records outs and the next execution times in the status of
// cron with one patch of the status subresource, or none when they are
// there already. On a conflict (cron was stale) the status is computed
// again from a fresh read, once.
func (c *Controller) writeStatus(ctx context.Context, cron *autoscalingv1alpha1.CronFederatedHPA, outs []outcome, next func(string) (time.Time, bool)) error {
	for attempt := 0; ; attempt++ {
		st := desiredStatus(cron, outs, next)
		if apiequality.Semantic.DeepEqual(st, cron.Status) {
			return nil
		}
		patch, err := statusPatch(cron.ResourceVersion, st)
		if err != nil {
			return err
		}
		err = c.patchStatus(ctx, cron.Namespace, cron.Name, patch)
		if apierrors.IsNotFound(err) {
			return nil // deleted: its delete event forgets it
		}
		if !apierrors.IsConflict(err) || attempt > 0 {
			return err
		}
		if cron, err = c.getCronFHPA(ctx, cron.Namespace, cron.Name); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
}
