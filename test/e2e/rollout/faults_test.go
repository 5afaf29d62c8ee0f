package rollout

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	"github.com/flotilla-io/flotilla/names"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
)

// TestMemberDownDuringItsStage: member2 is down when its stage starts. It
// counts as unhealthy, never as done: the run halts at its deadline naming
// member2, and member3 keeps the old image.
func TestMemberDownDuringItsStage(t *testing.T) {
	ns := setup(t, "rollout-down", stages("", "    progressDeadline: 15s\n"), "nginx:1.0")
	framework.StopMember(t, "member2")
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		c, err := framework.Karmada(t).ClusterV1alpha1().Clusters().Get(ctx, "member2", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			return "member2 still Ready"
		}
		return ""
	})
	setImage(t, ns, "nginx:2.0")
	r := run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutHalted))
	halted := meta.FindStatusCondition(r.Status.Conditions, flotillav1alpha1.RolloutConditionHalted)
	if r.Status.CurrentStage != "s2" || halted == nil || !strings.Contains(halted.Message, "member2 (Unhealthy: cluster is not ready)") {
		t.Errorf("halted at %s with %+v, want s2 naming member2 as not ready", r.Status.CurrentStage, halted)
	}
	if c := clusterStatus(r, "member1"); c == nil || c.Health != flotillav1alpha1.ClusterHealthy {
		t.Errorf("member1 %+v, want Healthy", c)
	}
	d, err := memberDeployment(t.Context(), t, ns, "member3")
	if err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.0" {
		t.Errorf("member3 runs %s, want nginx:1.0", img)
	}
}

// TestTemplateDeletedMidRollout: a template deleted while its rollout
// waits for approval is removed from every member as without a strategy,
// and its runs and revisions go with its binding.
func TestTemplateDeletedMidRollout(t *testing.T) {
	ns := setup(t, "rollout-deleted", stages("", "    before: [{type: Approval}]\n"), "nginx:1.0")
	setImage(t, ns, "nginx:2.0")
	run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	if err := framework.HostClient(t).AppsV1().Deployments(ns).Delete(t.Context(), "app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 2*time.Minute, func(ctx context.Context) string {
		for _, m := range members {
			if _, err := memberDeployment(ctx, t, ns, m); !apierrors.IsNotFound(err) {
				return fmt.Sprintf("%s still has the Deployment (%v)", m, err)
			}
		}
		runs, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		revs, err := framework.Karmada(t).FlotillaV1alpha1().ResourceRevisions(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		if len(runs.Items)+len(revs.Items) > 0 {
			return fmt.Sprintf("%d runs and %d revisions left", len(runs.Items), len(revs.Items))
		}
		return ""
	})
}

// TestStrategyNamesStagesThatSelectNothing: a strategy with a stage naming
// no registered cluster, and clusters the selectors of two stages select,
// is accepted and says so in its Ready condition, naming them (member1,
// named by a stage, goes there whatever the selectors say).
func TestStrategyNamesStagesThatSelectNothing(t *testing.T) {
	const name = "rollout-misselect"
	framework.Apply(t, `apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: `+name+`}
spec:
  stages:
  - name: canary
    clusters: {names: [member1]}
  - name: gone
    clusters: {names: [member9]}
  - name: all
    clusters: {labelSelector: {}}
  - name: again
    clusters: {labelSelector: {matchExpressions: [{key: no-such-label, operator: DoesNotExist}]}}
`)
	t.Cleanup(func() {
		_ = framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		s, err := framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		c := meta.FindStatusCondition(s.Status.Conditions, "Ready")
		want := "stages gone select no cluster; cluster member2 is selected by stages all, again (it goes to all); " +
			"cluster member3 is selected by stages all, again (it goes to all)"
		if c == nil || c.Status != metav1.ConditionFalse || c.Message != want {
			return fmt.Sprintf("Ready condition %+v, want False with %q", c, want)
		}
		return ""
	})
}

// TestConfigMapRollsOutOnceApplied: a kind without health interpretation
// (a ConfigMap) goes stage by stage, each stage done once its member has
// the change applied.
func TestConfigMapRollsOutOnceApplied(t *testing.T) {
	ns := framework.Namespace(t, "rollout-configmap")
	framework.Apply(t, fmt.Sprintf(`apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: %[1]s}
spec:
  stages:
%[2]s---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: settings
  namespace: %[1]s
  annotations: {%[3]s: %[1]s}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap, name: settings}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: %[1]s}
data: {level: "1"}
`, ns, stages(), flotillav1alpha1.RolloutStrategyAnnotation))
	t.Cleanup(func() {
		_ = framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	level := func(ctx context.Context, m string) string {
		cm, err := framework.MemberClient(t, m).CoreV1().ConfigMaps(ns).Get(ctx, "settings", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		return cm.Data["level"]
	}
	bindingName := names.BindingName("ConfigMap", "settings")
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		for _, m := range members {
			if l := level(ctx, m); l != "1" {
				return fmt.Sprintf("%s has level %s", m, l)
			}
		}
		rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, bindingName, metav1.GetOptions{})
		if err != nil || rb.Annotations[flotillav1alpha1.RevisionsAnnotation] == "" {
			return fmt.Sprintf("binding not held yet (%v)", err)
		}
		return ""
	})
	framework.Apply(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\ndata: {level: \"2\"}\n", ns))
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		r, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Get(ctx, names.RolloutRunName(bindingName, 2), metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		if r.Status.Phase != flotillav1alpha1.RolloutCompleted {
			return fmt.Sprintf("run phase %s at %s", r.Status.Phase, r.Status.CurrentStage)
		}
		return ""
	})
	for _, m := range members {
		if l := level(t.Context(), m); l != "2" {
			t.Errorf("%s has level %s, want 2", m, l)
		}
	}
}

// TestNewClusterHeldInItsStage: under a strategy with newClusters InStage,
// a cluster that joins the placement while a rollout waits runs the
// revision the rollout started from, and gets the new one when its stage
// starts.
func TestNewClusterHeldInItsStage(t *testing.T) {
	ns := framework.Namespace(t, "rollout-newcluster")
	framework.Apply(t, fmt.Sprintf(`apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: %s}
spec:
  newClusters: InStage
  stages:
%s`, ns, stages("", "    before: [{type: Approval}]\n")))
	t.Cleanup(func() {
		_ = framework.Karmada(t).FlotillaV1alpha1().RolloutStrategies().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	framework.Apply(t, appPolicy(ns, "member1, member2"))
	framework.Apply(t, fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: %s}
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec: {containers: [{name: app, image: "nginx:1.0"}]}
`, ns))
	for _, m := range members[:2] {
		waitImage(t, ns, m, "nginx:1.0", true)
	}
	framework.Eventually(t, time.Minute, func(ctx context.Context) string {
		rb, err := framework.Karmada(t).WorkV1alpha2().ResourceBindings(ns).Get(ctx, binding, metav1.GetOptions{})
		if err != nil || strings.Count(rb.Annotations[flotillav1alpha1.RevisionsAnnotation], "=") != 2 {
			return fmt.Sprintf("binding not held yet (%v)", err)
		}
		return ""
	})
	setImage(t, ns, "nginx:2.0")
	r := run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	// member3 joins while stage s2 waits: it gets the revision the run
	// started from.
	framework.Apply(t, appPolicy(ns, "member1, member2, member3"))
	waitImage(t, ns, "member3", "nginx:1.0", true)
	if _, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Patch(t.Context(), r.Name, types.MergePatchType,
		[]byte(`{"spec":{"approvals":[{"stage":"s2","gate":"Before"}]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	r = run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	for _, m := range members {
		waitImage(t, ns, m, "nginx:2.0", true)
	}
	if c := clusterStatus(r, "member3"); c == nil || c.UpdateTime == nil {
		t.Errorf("member3 in the run %+v, want it updated in its stage", c)
	}
}

// TestApprovalRefusedWithoutAccess: a caller the control plane does not
// allow to change RolloutRuns is refused (the RolloutRun's spec, through
// the API and through flotillactl), and the run keeps waiting; reading the
// run is refused too.
func TestApprovalRefusedWithoutAccess(t *testing.T) {
	ns := setup(t, "rollout-refused", stages("", "    before: [{type: Approval}]\n"), "nginx:1.0")
	setImage(t, ns, "nginx:2.0")
	r := run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	stranger := versioned.NewForConfigOrDie(framework.ServiceAccountConfig(t, "rollout-stranger"))
	_, err := stranger.FlotillaV1alpha1().RolloutRuns(ns).Patch(t.Context(), r.Name, types.MergePatchType,
		[]byte(`{"spec":{"approvals":[{"stage":"s2","gate":"Before"}]}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("approval by a stranger: %v, want Forbidden", err)
	}
	if _, err := stranger.FlotillaV1alpha1().RolloutRuns(ns).Get(t.Context(), r.Name, metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a stranger reading the run: %v, want Forbidden", err)
	}
	if _, err := stranger.FlotillaV1alpha1().ResourceRevisions(ns).List(t.Context(), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a stranger listing revisions: %v, want Forbidden", err)
	}
	time.Sleep(2 * time.Second)
	r = run(t, ns, 2, time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	if len(r.Spec.Approvals) != 0 {
		t.Errorf("approvals %v after a refused approval, want none", r.Spec.Approvals)
	}
}
