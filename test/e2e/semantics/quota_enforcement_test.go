package semantics

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// cpuOnly is a Deployment whose pods request cpu and nothing else.
func cpuOnly(ns, name string, replicas int, cpu string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: %[2]s}}
  template:
    metadata: {labels: {app: %[2]s}}
    spec:
      containers:
      - {name: nginx, image: nginx:1.27, resources: {requests: {cpu: %[4]s}}}
`, ns, name, replicas, cpu)
}

// bindingState is the binding of Deployment name: its clusters
// ("member1:1 "), Scheduled condition and per-replica CPU request.
func bindingState(ctx context.Context, t *testing.T, ns, name string) (clusters string, cond *metav1.Condition, cpu string, err error) {
	b, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, name+"-deployment", metav1.GetOptions{})
	if err != nil {
		return "", nil, "", err
	}
	for _, c := range b.Spec.Clusters {
		clusters += fmt.Sprintf("%s:%d ", c.Name, c.Replicas)
	}
	cond = meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
	if rr := b.Spec.ReplicaRequirements; rr != nil {
		cpu = rr.ResourceRequest.Cpu().String()
	}
	return clusters, cond, cpu, nil
}

// TestQuotaEnforcementOnBindings: a FederatedResourceQuota's
// overall is enforced on ResourceBinding writes, whoever writes them.
// overallUsed follows the scheduling results at once, for the resources
// overall names. A scale-up beyond it keeps the old replicas with
// Scheduled=False QuotaExceeded and ScheduleBindingFailed on the binding
// and the Deployment; a direct write of spec.clusters is refused with 403
// QuotaExceeded naming the quota and the resource; a higher request is
// refused to the detector (ApplyPolicyFailed on the Deployment, the
// binding keeps its old requirements); a new workload stays unscheduled.
func TestQuotaEnforcementOnBindings(t *testing.T) {
	ns := framework.Namespace(t, "sem-frq-enf")
	quota := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: FederatedResourceQuota
metadata: {name: team, namespace: %s}
spec:
  overall: {cpu: 10m, memory: 100Mi}
`, ns)
	policy := fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: all, namespace: %s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
`, ns)
	framework.Apply(t, quota+"---\n"+policy+"---\n"+cpuOnly(ns, "a", 1, "10m"))

	// Scheduled, and overallUsed says so at once: cpu only (memory is not
	// requested, pods are not in overall).
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		clusters, _, _, err := bindingState(ctx, t, ns, "a")
		if err != nil {
			return err.Error()
		}
		if clusters != "member1:1 " {
			return fmt.Sprintf("a scheduled to %q, want member1:1", clusters)
		}
		q, err := framework.Karmada(t).PolicyV1alpha1().FederatedResourceQuotas(ns).Get(ctx, "team", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		used, _ := json.Marshal(q.Status.OverallUsed)
		if len(q.Status.OverallUsed) != 1 || q.Status.OverallUsed.Cpu().String() != "10m" {
			return fmt.Sprintf("overallUsed %s, want {cpu: 10m}", used)
		}
		return ""
	})

	// Karmada's resourcebinding webhook denies a write beyond the quota;
	// the API server reports the denial in these words, which scripts match.
	denial := func(sum string) string {
		return fmt.Sprintf(`admission webhook "resourcebinding.karmada.io" denied the request: FederatedResourceQuota(%s/team) exceeded for resource cpu: requested sum %s, limit 10m.`, ns, sum)
	}

	// A scale-up beyond the quota keeps the replica it has.
	framework.Apply(t, cpuOnly(ns, "a", 2, "10m"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		clusters, cond, _, err := bindingState(ctx, t, ns, "a")
		if err != nil {
			return err.Error()
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonQuotaExceeded ||
			cond.Message != denial("20m") {
			return fmt.Sprintf("Scheduled condition %+v, want False QuotaExceeded %q", cond, denial("20m"))
		}
		if clusters != "member1:1 " {
			return fmt.Sprintf("a scheduled to %q, want member1:1 kept", clusters)
		}
		return ""
	})
	for kind, name := range map[string]string{"ResourceBinding": "a-deployment", "Deployment": "a"} {
		if got := waitEvent(t, ns, kind, name, "ScheduleBindingFailed", "team"); got != denial("20m") {
			t.Errorf("ScheduleBindingFailed on %s %s: %q, want %q", kind, name, got, denial("20m"))
		}
	}

	// Any writer of the binding is held to the quota: a direct write of
	// spec.clusters is refused and changes nothing.
	patch := []byte(`{"spec":{"clusters":[{"name":"member1","replicas":2}]}}`)
	_, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Patch(t.Context(), "a-deployment", types.MergePatchType, patch, metav1.PatchOptions{})
	switch {
	case err == nil:
		t.Fatal("a write of spec.clusters beyond the quota was accepted")
	case !apierrors.IsForbidden(err) || apierrors.ReasonForError(err) != "QuotaExceeded":
		t.Fatalf("refusal %v (reason %s), want 403 QuotaExceeded", err, apierrors.ReasonForError(err))
	}
	if status, ok := err.(apierrors.APIStatus); ok {
		if msg := status.Status().Message; msg != denial("20m") || status.Status().Code != 403 {
			t.Errorf("refusal %d %q, want 403 %q", status.Status().Code, msg, denial("20m"))
		}
	}
	if clusters, _, _, err := bindingState(t.Context(), t, ns, "a"); err != nil || clusters != "member1:1 " {
		t.Fatalf("after the refused write: clusters %q (%v), want member1:1", clusters, err)
	}
	// So is a decision written through the scheduling subresource.
	_, err = framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Patch(t.Context(), "a-deployment", types.MergePatchType, patch,
		metav1.PatchOptions{}, workv1alpha2.SchedulingSubresource)
	if !apierrors.IsForbidden(err) || apierrors.ReasonForError(err) != "QuotaExceeded" {
		t.Fatalf("a decision beyond the quota through %s: %v (reason %s), want 403 QuotaExceeded",
			workv1alpha2.SchedulingSubresource, err, apierrors.ReasonForError(err))
	}
	if clusters, _, _, err := bindingState(t.Context(), t, ns, "a"); err != nil || clusters != "member1:1 " {
		t.Fatalf("after the refused decision: clusters %q (%v), want member1:1", clusters, err)
	}

	// Back to one replica; then a higher request is refused to the detector.
	framework.Apply(t, cpuOnly(ns, "a", 1, "10m"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		clusters, cond, _, err := bindingState(ctx, t, ns, "a")
		if err != nil {
			return err.Error()
		}
		if cond == nil || cond.Status != metav1.ConditionTrue || clusters != "member1:1 " {
			return fmt.Sprintf("a at %q with %+v, want scheduled again to member1:1", clusters, cond)
		}
		return ""
	})
	framework.Apply(t, cpuOnly(ns, "a", 1, "20m"))
	waitEvent(t, ns, "Deployment", "a", "ApplyPolicyFailed", denial("20m"))
	if _, _, cpu, err := bindingState(t.Context(), t, ns, "a"); err != nil || cpu != "10m" {
		t.Fatalf("binding requests %q (%v), want the old 10m kept", cpu, err)
	}

	// A new workload finds no room: it stays unscheduled.
	framework.Apply(t, cpuOnly(ns, "b", 1, "10m"))
	framework.Eventually(t, 90*time.Second, func(ctx context.Context) string {
		clusters, cond, _, err := bindingState(ctx, t, ns, "b")
		if err != nil {
			return err.Error()
		}
		if clusters != "" {
			return fmt.Sprintf("b scheduled to %q beyond the quota", clusters)
		}
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.BindingReasonQuotaExceeded {
			return fmt.Sprintf("Scheduled condition of b %+v, want False QuotaExceeded", cond)
		}
		return ""
	})
	for kind, name := range map[string]string{"ResourceBinding": "b-deployment", "Deployment": "b"} {
		if got := waitEvent(t, ns, kind, name, "ScheduleBindingFailed", "team"); got != denial("20m") {
			t.Errorf("ScheduleBindingFailed on %s %s: %q, want %q", kind, name, got, denial("20m"))
		}
	}
	if _, err := framework.MemberClient(t, "member1").AppsV1().Deployments(ns).Get(t.Context(), "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment b in member1: %v, want none", err)
	}
}
