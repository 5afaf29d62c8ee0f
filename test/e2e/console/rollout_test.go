package console

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestApproveHaltedStage: a rollout waits for an approval before its
// second stage; a user who may read runs but not change them presses
// Approve and reads the control plane's refusal, nothing changes; the
// admin presses it and the run moves on.
func TestApproveHaltedStage(t *testing.T) {
	ns := framework.Namespace(t, "console-rollout")
	framework.Apply(t, fmt.Sprintf(`apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: %[1]s}
spec:
  stages:
    - name: s1
      clusters: {names: [member1]}
    - name: s2
      clusters: {names: [member2]}
      before: [{type: Approval}]
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: app
  namespace: %[1]s
  annotations: {%[2]s: %[1]s}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: app}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling: {replicaSchedulingType: Duplicated}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: %[1]s}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec: {containers: [{name: app, image: "nginx:1.0"}]}
`, ns, flotillav1alpha1.RolloutStrategyAnnotation))
	t.Cleanup(func() {
		_ = framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	binding := names.BindingName("Deployment", "app")
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if v := rb.Annotations[flotillav1alpha1.RevisionsAnnotation]; strings.Count(v, "=") < 2 {
			return "binding revisions " + v + ", want both members held"
		}
		return ""
	})
	if _, err := framework.HostClient(t).AppsV1().Deployments(ns).Patch(t.Context(), "app", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2.0"}]}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	runName := names.RolloutRunName(binding, 2)
	waitRun := func(check func(*flotillav1alpha1.RolloutRun) string) {
		t.Helper()
		framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
			r, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Get(ctx, runName, metav1.GetOptions{})
			if err != nil {
				return err.Error()
			}
			return check(r)
		})
	}
	waitRun(func(r *flotillav1alpha1.RolloutRun) string {
		if r.Status.Phase != flotillav1alpha1.RolloutWaitingForApproval {
			return "phase " + string(r.Status.Phase)
		}
		return ""
	})

	// A reader of runs: the console shows the run, and the approval is
	// refused with the server's message.
	cfg := framework.ServiceAccountConfig(t, "console-rollout-reader")
	grant(t, "console-rollout-reader", rbacv1.PolicyRule{APIGroups: []string{"flotilla.io"}, Resources: []string{"rolloutruns"}, Verbs: []string{"get", "list", "watch"}})
	section := `section[data-run="` + ns + `/` + runName + `"]`
	approve := section + ` button.approve`
	readerURL := startConsole(t, kubeconfigOf(t, cfg))
	ctx := browser(t)
	eventually(t, ctx, readerURL+"rollouts?namespace="+ns, 30*time.Second, true, func() string {
		if s, _ := text(ctx, approve); !strings.Contains(s, "Approve s2 (Before)") {
			all, _ := text(ctx, "main")
			return "no Approve button: " + all
		}
		return ""
	})
	screenshot(t, ctx, "rollout-waiting")
	click(t, ctx, approve, func() string {
		if s, _ := text(ctx, `[role="alert"]`); s == "" {
			body, _ := text(ctx, "body")
			return "no refusal shown: " + body
		}
		return ""
	})
	if s, _ := text(ctx, `[role="alert"]`); !strings.Contains(s, "approve of rolloutrun") || !strings.Contains(s, "Not allowed") {
		t.Errorf("the reader's approval: %q, want the server's refusal", s)
	}
	screenshot(t, ctx, "rollout-refused")
	r, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Get(t.Context(), runName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Spec.Approvals) != 0 {
		t.Fatalf("approvals %+v after a refused approval", r.Spec.Approvals)
	}

	// The admin approves; the run goes on to s2.
	adminURL := startConsole(t, framework.Env.Host.Kubeconfig)
	eventually(t, ctx, adminURL+"rollouts?namespace="+ns, 30*time.Second, true, func() string {
		if s, _ := text(ctx, approve); s == "" {
			return "no Approve button for the admin"
		}
		return ""
	})
	// Live: the run paused and resumed by someone else (through the API)
	// shows on the open page, without a reload, within a second.
	for _, paused := range []bool{true, false} {
		button := section + " button.pause"
		if paused {
			button = section + " button.resume"
		}
		changed := time.Now()
		if _, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Patch(t.Context(), runName, types.MergePatchType,
			fmt.Appendf(nil, `{"spec":{"paused":%t}}`, paused), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		onPage(t, 10*time.Second, func() string {
			if s, _ := text(ctx, button); s == "" {
				return fmt.Sprintf("no %s on the open page after the run's paused turned %t", button, paused)
			}
			return ""
		})
		took := time.Since(changed)
		t.Logf("the run's paused turned %t: on the open page %s later", paused, took.Round(time.Millisecond))
		if took > time.Second+500*time.Millisecond {
			t.Errorf("the run's change reached the open page %s later, want about a second at most", took)
		}
	}
	click(t, ctx, approve, func() string {
		if s, _ := text(ctx, ".done"); s == "" {
			body, _ := text(ctx, "body")
			return "no confirmation shown: " + body
		}
		return ""
	})
	if s, _ := text(ctx, ".done"); !strings.Contains(s, "approve done") {
		t.Errorf("after approving: %q", s)
	}
	waitRun(func(r *flotillav1alpha1.RolloutRun) string {
		if len(r.Spec.Approvals) != 1 || r.Spec.Approvals[0].Stage != "s2" || r.Spec.Approvals[0].Approver == "" {
			return fmt.Sprintf("approvals %+v", r.Spec.Approvals)
		}
		if r.Status.Phase == flotillav1alpha1.RolloutWaitingForApproval {
			return "still waiting for approval"
		}
		return ""
	})
	screenshot(t, ctx, "rollout-approved")
}
