package cronfederatedhpa

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

var t0 = time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)

func at(minutes int) *metav1.Time {
	t := metav1.NewTime(t0.Add(time.Duration(minutes) * time.Minute))
	return &t
}

// ok is a successful execution scheduled at minute m, run 1s later, of replicas.
func ok(m int, replicas int32) autoscalingv1alpha1.SuccessfulExecution {
	return autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: at(m), ExecutionTime: &metav1.Time{Time: at(m).Add(time.Second)}, AppliedReplicas: ptr.To(replicas)}
}

func failed(m int, msg string) autoscalingv1alpha1.FailedExecution {
	return autoscalingv1alpha1.FailedExecution{ScheduleTime: at(m), ExecutionTime: &metav1.Time{Time: at(m).Add(time.Second)}, Message: msg}
}

func okOutcome(r string, m int, replicas int32) outcome {
	return outcome{execution: execution{rule: r, scheduleTime: at(m).Time}, executionTime: at(m).Add(time.Second),
		applied: autoscalingv1alpha1.SuccessfulExecution{AppliedReplicas: ptr.To(replicas)}}
}

func failedOutcome(r string, m int, msg string) outcome {
	return outcome{execution: execution{rule: r, scheduleTime: at(m).Time}, executionTime: at(m).Add(time.Second), err: errors.New(msg)}
}

func TestDesiredStatus(t *testing.T) {
	t.Parallel()
	rules := func(rs ...autoscalingv1alpha1.CronFederatedHPARule) []autoscalingv1alpha1.CronFederatedHPARule {
		return rs
	}
	limited := func(name string, succeeded, failed int32) autoscalingv1alpha1.CronFederatedHPARule {
		r := rule(name, "* * * * *")
		r.SuccessfulHistoryLimit, r.FailedHistoryLimit = ptr.To(succeeded), ptr.To(failed)
		return r
	}
	// next plans every rule at minute 60 except "suspended".
	next := func(rule string) (time.Time, bool) {
		if rule == "suspended" {
			return time.Time{}, false
		}
		return at(60).Time, true
	}
	for _, tc := range []struct {
		name   string
		rules  []autoscalingv1alpha1.CronFederatedHPARule
		status []autoscalingv1alpha1.ExecutionHistory
		outs   []outcome
		want   []autoscalingv1alpha1.ExecutionHistory
	}{{
		name:  "new rules get a history with their next time, in spec order",
		rules: rules(rule("b", "* * * * *"), rule("a", "* * * * *"), rule("suspended", "* * * * *")),
		want:  []autoscalingv1alpha1.ExecutionHistory{{RuleName: "b", NextExecutionTime: at(60)}, {RuleName: "a", NextExecutionTime: at(60)}, {RuleName: "suspended"}},
	}, {
		name:   "removed rules dropped, kept ones keep their place, new ones appended",
		rules:  rules(rule("new", "* * * * *"), rule("a", "* * * * *"), rule("b", "* * * * *")),
		status: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "b", NextExecutionTime: at(1)}, {RuleName: "gone"}, {RuleName: "a", SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(0, 1)}}},
		want: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "b", NextExecutionTime: at(60)},
			{RuleName: "a", NextExecutionTime: at(60), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(0, 1)}},
			{RuleName: "new", NextExecutionTime: at(60)}},
	}, {
		name:   "a suspended rule keeps its history without a next time",
		rules:  rules(rule("suspended", "* * * * *")),
		status: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "suspended", NextExecutionTime: at(5), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(0, 1)}}},
		want:   []autoscalingv1alpha1.ExecutionHistory{{RuleName: "suspended", SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(0, 1)}}},
	}, {
		name:   "newest first, trimmed to the default limit of 3",
		rules:  rules(rule("a", "* * * * *")),
		status: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(2, 2), ok(1, 1), ok(0, 0)}}},
		outs:   []outcome{okOutcome("a", 3, 3)},
		want:   []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(3, 3), ok(2, 2), ok(1, 1)}}},
	}, {
		name:  "several outcomes recorded in schedule order, whatever order they come in",
		rules: rules(rule("a", "* * * * *")),
		outs:  []outcome{okOutcome("a", 2, 2), failedOutcome("a", 1, "boom"), okOutcome("a", 0, 0)},
		want: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60),
			SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(2, 2), ok(0, 0)},
			FailedExecutions:     []autoscalingv1alpha1.FailedExecution{failed(1, "boom")}}},
	}, {
		name:  "custom limits; a failed limit of 0 keeps no failures",
		rules: rules(limited("a", 1, 0)),
		status: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(1, 1)},
			FailedExecutions: []autoscalingv1alpha1.FailedExecution{failed(0, "old")}}},
		outs: []outcome{okOutcome("a", 2, 2), failedOutcome("a", 3, "new")},
		want: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(2, 2)}}},
	}, {
		name:   "a lowered limit trims without an execution",
		rules:  rules(limited("a", 1, 1)),
		status: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(1, 1), ok(0, 0)}}},
		want:   []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(1, 1)}}},
	}, {
		name:  "outcomes of a removed rule are dropped",
		rules: rules(rule("a", "* * * * *")),
		outs:  []outcome{okOutcome("gone", 1, 1)},
		want:  []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60)}},
	}, {
		name:   "duplicate histories collapse to the first",
		rules:  rules(rule("a", "* * * * *")),
		status: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(1, 1)}}, {RuleName: "a"}},
		want:   []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(60), SuccessfulExecutions: []autoscalingv1alpha1.SuccessfulExecution{ok(1, 1)}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cron := cronFor("apps/v1", "Deployment", "web")
			cron.Spec.Rules = tc.rules
			cron.Status.ExecutionHistories = tc.status
			before := cron.DeepCopy()
			got := desiredStatus(cron, tc.outs, next)
			if diff := cmp.Diff(tc.want, got.ExecutionHistories); diff != "" {
				t.Errorf("histories (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, cron); diff != "" {
				t.Errorf("cron modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestStatusPatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rv   string
		st   autoscalingv1alpha1.CronFederatedHPAStatus
		want string
	}{{
		name: "histories replaced whole, under the resourceVersion read",
		rv:   "42",
		st:   autoscalingv1alpha1.CronFederatedHPAStatus{ExecutionHistories: []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: at(0)}}},
		want: `{"metadata":{"resourceVersion":"42"},"status":{"executionHistories":[{"ruleName":"a","nextExecutionTime":"2025-06-01T08:00:00Z"}]}}`,
	}, {
		name: "no histories removes the field",
		want: `{"status":{"executionHistories":null}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := statusPatch(tc.rv, tc.st)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("patch = %s\nwant %s", got, tc.want)
			}
		})
	}
}
