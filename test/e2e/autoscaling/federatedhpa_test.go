package autoscaling

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/telemetry"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

const fhpa = `apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: nginx, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nginx}
  minReplicas: 1
  maxReplicas: 10
  behavior:
    scaleDown: {stabilizationWindowSeconds: 10}
    scaleUp: {stabilizationWindowSeconds: 10}
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 10}}
`

// TestFederatedHPA: a FederatedHPA at 10% CPU of a Deployment divided 1:1
// scales it up over both members when its pods' CPU use rises, and back to
// minReplicas when it falls, with SuccessfulRescale events giving the
// reason.
func TestFederatedHPA(t *testing.T) {
	ns := framework.Namespace(t, "s8-fhpa")
	framework.Apply(t, nginx(ns, 2, "1m"))
	processed, pulled := autoscalingMetric(t, telemetry.FederatedHPAProcessDuration), autoscalingMetric(t, telemetry.FederatedHPAPullMetricsDuration)
	framework.Apply(t, fmt.Sprintf(fhpa, ns))
	kc := karmada(t)

	// 1m of 25m is 4%: below target, the FederatedHPA computes and keeps
	// the minimum it can reach.
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		f, err := kc.AutoscalingV1alpha1().FederatedHPAs(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if !condition(f.Status.Conditions, autoscalingv2.ScalingActive, "True") {
			return fmt.Sprintf("conditions %s, want ScalingActive True", conditions(f.Status.Conditions))
		}
		return ""
	})
	// Karmada's FederatedHPA metrics count the computation and its pulls.
	if now := autoscalingMetric(t, telemetry.FederatedHPAProcessDuration); now <= processed {
		t.Errorf("%s_count %v, was %v: no FederatedHPA processing counted", telemetry.FederatedHPAProcessDuration, now, processed)
	}
	if now := autoscalingMetric(t, telemetry.FederatedHPAPullMetricsDuration); now <= pulled {
		t.Errorf("%s_count %v, was %v: no metrics pull counted", telemetry.FederatedHPAPullMetricsDuration, now, pulled)
	}

	// 20m of 25m is 80%, eight times the target: up to the maximum.
	setUsage(t, ns, "20m")
	framework.Eventually(t, 4*time.Minute, func(ctx context.Context) string {
		f, err := kc.AutoscalingV1alpha1().FederatedHPAs(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		pods, err := runningPods(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if f.Status.DesiredReplicas != 10 || len(pods["member1"]) < 2 || len(pods["member2"]) < 2 {
			return fmt.Sprintf("desired %d current %d, running pods %v; conditions %s; %s", f.Status.DesiredReplicas, f.Status.CurrentReplicas,
				pods, conditions(f.Status.Conditions), podsAndSamples(ctx, t, ns))
		}
		return ""
	})
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		msgs := eventMessages(ctx, t, ns, "FederatedHPA", "nginx")
		if !containsLine(msgs, "SuccessfulRescale", "cpu resource utilization (percentage of request) above target") {
			return fmt.Sprintf("events %v, want a SuccessfulRescale above target", msgs)
		}
		return ""
	})
	d, err := host(t).AppsV1().Deployments(ns).Get(t.Context(), "nginx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 10 {
		t.Errorf("template replicas %d, want 10", *d.Spec.Replicas)
	}

	// Load stops: back to minReplicas.
	setUsage(t, ns, "1m")
	framework.Eventually(t, 4*time.Minute, func(ctx context.Context) string {
		f, err := kc.AutoscalingV1alpha1().FederatedHPAs(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if f.Status.DesiredReplicas != 1 {
			return fmt.Sprintf("desired %d current %d; conditions %s; %s", f.Status.DesiredReplicas, f.Status.CurrentReplicas,
				conditions(f.Status.Conditions), podsAndSamples(ctx, t, ns))
		}
		return ""
	})
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		msgs := eventMessages(ctx, t, ns, "FederatedHPA", "nginx")
		if !containsLine(msgs, "SuccessfulRescale", "New size: 1; reason: All metrics below target") {
			return fmt.Sprintf("events %v, want a SuccessfulRescale to 1 below target", msgs)
		}
		return ""
	})
}

// autoscalingMetric is the number of observations of the histogram name
// on flotilla-apiserver's plain-HTTP metrics endpoint.
func autoscalingMetric(t *testing.T, name string) float64 {
	t.Helper()
	ss, err := framework.PlainMetrics(t.Context(), framework.Env.Host.Ports.FlotillaMetrics)
	if err != nil {
		t.Fatalf("scraping flotilla-apiserver's metrics: %v", err)
	}
	return ss.Sum(name+"_count", nil)
}

func condition(conds []autoscalingv2.HorizontalPodAutoscalerCondition, t autoscalingv2.HorizontalPodAutoscalerConditionType, status string) bool {
	for _, c := range conds {
		if c.Type == t {
			return string(c.Status) == status
		}
	}
	return false
}

func conditions(conds []autoscalingv2.HorizontalPodAutoscalerCondition) string {
	var out []string
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s %s %q", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(out, "; ")
}
