package autoscaling

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/telemetry"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestCronFederatedHPA: a rule "*/1 * * * *" with targetReplicas 5 scales
// the Deployment at the next minute and records the execution.
func TestCronFederatedHPA(t *testing.T) {
	ns := framework.Namespace(t, "s8-cron")
	processed := autoscalingMetric(t, telemetry.CronFederatedHPAProcessDuration)
	framework.Apply(t, nginx(ns, 2, "1m"))
	framework.Apply(t, fmt.Sprintf(`apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: nginx-cron, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  rules:
    - {name: every-minute, schedule: "*/1 * * * *", targetReplicas: 5}
`, ns))
	kc := karmada(t)
	// The next minute boundary, plus the rollout to the members.
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		d, err := host(t).AppsV1().Deployments(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if *d.Spec.Replicas != 5 {
			return fmt.Sprintf("template replicas %d, want 5", *d.Spec.Replicas)
		}
		c, err := kc.AutoscalingV1alpha1().CronFederatedHPAs(ns).Get(ctx, "nginx-cron", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if len(c.Status.ExecutionHistories) != 1 || len(c.Status.ExecutionHistories[0].SuccessfulExecutions) == 0 {
			return fmt.Sprintf("execution histories %+v, want a successful execution", c.Status.ExecutionHistories)
		}
		e := c.Status.ExecutionHistories[0]
		if e.RuleName != "every-minute" || e.NextExecutionTime == nil || e.SuccessfulExecutions[0].AppliedReplicas == nil || *e.SuccessfulExecutions[0].AppliedReplicas != 5 {
			return fmt.Sprintf("execution history %+v, want rule every-minute applied 5 with a next execution time", e)
		}
		return ""
	})
	if now := autoscalingMetric(t, telemetry.CronFederatedHPAProcessDuration); now <= processed {
		t.Errorf("%s_count %v, was %v: the rule's execution is not counted", telemetry.CronFederatedHPAProcessDuration, now, processed)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		pods, err := runningPods(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if len(pods["member1"])+len(pods["member2"]) != 5 || len(pods["member1"]) == 0 || len(pods["member2"]) == 0 {
			return fmt.Sprintf("running pods %v, want 5 over both members", pods)
		}
		return ""
	})

	// A bad schedule is refused with a field error.
	out, err := framework.Kubectl(t, "-n", ns, "patch", "cronfederatedhpa", "nginx-cron", "--type=json",
		"-p", `[{"op":"replace","path":"/spec/rules/0/schedule","value":"every minute"}]`)
	if err == nil {
		t.Fatalf("a bad schedule was accepted: %s", out)
	}
	if !containsLine([]string{out}, "spec.rules[0].schedule") {
		t.Errorf("error %q does not name spec.rules[0].schedule", out)
	}
}
