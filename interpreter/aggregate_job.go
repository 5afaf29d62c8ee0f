package interpreter

import (
	"fmt"
	"reflect"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Reasons of the conditions the Job aggregation adds.
const (
	JobFailedReason    = "JobFailed"
	JobCompletedReason = "Completed"
)

// jobFinished returns the type of the Complete or Failed condition that is
// True, if any.
func jobFinished(s *batchv1.JobStatus) (batchv1.JobConditionType, bool) {
	for _, c := range s.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type, true
		}
	}
	return "", false
}

// aggregateJob sums the members' counters and derives the conditions and
// times. A template job that is already finished is left alone.
func aggregateJob(n *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old batchv1.JobStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	if _, done := jobFinished(&old); done || len(items) == 0 {
		return obj, nil
	}
	next := batchv1.JobStatus{}
	var failed []string
	var startTime, completionTime *metav1.Time
	succeeded, started, completed := 0, 0, 0
	for _, item := range items {
		var m batchv1.JobStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.Active += m.Active
		next.Succeeded += m.Succeeded
		next.Failed += m.Failed
		switch t, done := jobFinished(&m); {
		case done && t == batchv1.JobComplete:
			succeeded++
		case done && t == batchv1.JobFailed:
			failed = append(failed, item.ClusterName)
		}
		if m.StartTime != nil {
			started++
			if startTime == nil || m.StartTime.Before(startTime) {
				startTime = m.StartTime
			}
		}
		if m.CompletionTime != nil {
			completed++
			if completionTime == nil || completionTime.Before(m.CompletionTime) {
				completionTime = m.CompletionTime
			}
		}
	}
	now := metav1.NewTime(n.now())
	if len(failed) > 0 {
		next.Conditions = append(next.Conditions, batchv1.JobCondition{
			Type:               batchv1.JobFailed,
			Status:             corev1.ConditionTrue,
			LastProbeTime:      now,
			LastTransitionTime: now,
			Reason:             JobFailedReason,
			Message:            fmt.Sprintf("Job executed failed in member clusters %s", strings.Join(failed, ",")),
		})
	}
	if succeeded == len(items) {
		for _, t := range []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete} {
			next.Conditions = append(next.Conditions, batchv1.JobCondition{
				Type:               t,
				Status:             corev1.ConditionTrue,
				LastProbeTime:      now,
				LastTransitionTime: now,
				Reason:             JobCompletedReason,
				Message:            "Job completed",
			})
		}
	}
	switch {
	case old.StartTime != nil:
		next.StartTime = old.StartTime
	case started == len(items):
		next.StartTime = startTime
	}
	if completed == len(items) {
		next.CompletionTime = completionTime
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatus(obj, &next)
}

// aggregateCronJob concatenates active job references and takes the latest
// schedule and successful times.
func aggregateCronJob(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old batchv1.CronJobStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := batchv1.CronJobStatus{}
	for _, item := range items {
		var m batchv1.CronJobStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.Active = append(next.Active, m.Active...)
		next.LastScheduleTime = laterTime(next.LastScheduleTime, m.LastScheduleTime)
		next.LastSuccessfulTime = laterTime(next.LastSuccessfulTime, m.LastSuccessfulTime)
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatus(obj, &next)
}

func laterTime(a, b *metav1.Time) *metav1.Time {
	if a == nil || (b != nil && a.Before(b)) {
		return b
	}
	return a
}
