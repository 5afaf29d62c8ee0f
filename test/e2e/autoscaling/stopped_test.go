package autoscaling

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestMemberStopped: while member2's API server is stopped, the
// FederatedHPA keeps computing on member1 and its ScalingActive condition
// names the missing cluster. member2 is started again afterwards.
func TestMemberStopped(t *testing.T) {
	ns := framework.Namespace(t, "s8-stopped")
	// minReplicas 4 keeps pods in both members: a member with no replica
	// is not a target, and then nothing of it is missing.
	framework.Apply(t, nginx(ns, 4, "1m"))
	framework.Apply(t, strings.Replace(fmt.Sprintf(fhpa, ns), "minReplicas: 1", "minReplicas: 4", 1))
	kc := karmada(t)
	active := func(ctx context.Context) (*autoscalingv2.HorizontalPodAutoscalerCondition, string) {
		f, err := kc.AutoscalingV1alpha1().FederatedHPAs(ns).Get(ctx, "nginx", metav1.GetOptions{})
		if err != nil {
			return nil, err.Error()
		}
		for i, c := range f.Status.Conditions {
			if c.Type == autoscalingv2.ScalingActive {
				return &f.Status.Conditions[i], ""
			}
		}
		return nil, fmt.Sprintf("conditions %s, want ScalingActive", conditions(f.Status.Conditions))
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		c, msg := active(ctx)
		if c == nil {
			return msg
		}
		if c.Status != "True" {
			return fmt.Sprintf("ScalingActive %s %s %q", c.Status, c.Reason, c.Message)
		}
		return ""
	})

	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		pods, err := runningPods(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if len(pods["member1"]) != 2 || len(pods["member2"]) != 2 {
			return fmt.Sprintf("running pods %v, want 2 in each member", pods)
		}
		return ""
	})
	framework.StopMember(t, "member2")
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		c, msg := active(ctx)
		if c == nil {
			return msg
		}
		if c.Status != "True" || !strings.Contains(c.Message, "member2") {
			return fmt.Sprintf("ScalingActive %s %s %q, want True naming member2", c.Status, c.Reason, c.Message)
		}
		return ""
	})
}
