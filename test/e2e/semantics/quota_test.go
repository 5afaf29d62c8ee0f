package semantics

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestFederatedQuotaEnforcement: a FederatedResourceQuota's
// overall limit is enforced when scheduling: a binding that would exceed it
// is not scheduled, with the QuotaExceeded condition, until the limit rises.
func TestFederatedQuotaEnforcement(t *testing.T) {
	ns := framework.Namespace(t, "sem-frq")
	frq := func(pods int) string {
		return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team, namespace: %s}
spec:
  overall: {pods: "%d"}
`, ns, pods)
	}
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Weighted, weightPreference: {dynamicWeight: AvailableReplicas}}
`, ns)
	framework.Apply(t, frq(3)+"---\n"+policy+"---\n"+nginx(ns, "a", 2, ""))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, _, err := scheduled(ctx, t, ns, "a")
		if err != nil {
			return err.Error()
		}
		if got == "" {
			return "a not scheduled"
		}
		return ""
	})
	framework.Apply(t, nginx(ns, "b", 2, ""))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, cond, err := scheduled(ctx, t, ns, "b")
		if err != nil {
			return err.Error()
		}
		if got != "" {
			return fmt.Sprintf("b scheduled to %q beyond the quota", got)
		}
		if cond == nil || cond.Reason != workv1alpha2.BindingReasonQuotaExceeded || !strings.Contains(cond.Message, "FederatedResourceQuota("+ns+"/team) exceeded for resource pods") {
			return fmt.Sprintf("Scheduled condition %+v, want QuotaExceeded", cond)
		}
		return ""
	})
	framework.Apply(t, frq(4))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		got, _, err := scheduled(ctx, t, ns, "b")
		if err != nil {
			return err.Error()
		}
		if got == "" {
			return "b still not scheduled after the quota rose"
		}
		return ""
	})
}
