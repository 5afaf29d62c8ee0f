package rollout

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/test/e2e/framework"
	"github.com/flotilla-io/flotilla/test/env"
)

// TestStagedRolloutHaltsAndRecovers: an image change reaches member1, then
// member2 once member1 soaked healthy, then member3. A change whose pods
// never become Ready halts at member1's stage when its deadline passes,
// member2 and member3 untouched (their member objects not written at all);
// a fixing change starts a new run from the first stage and completes.
func TestStagedRolloutHaltsAndRecovers(t *testing.T) {
	const soak = 5 * time.Second
	ns := setup(t, "rollout-halt", stages("    soakTime: 5s\n    progressDeadline: 30s\n", "    progressDeadline: 30s\n", "    progressDeadline: 30s\n"), "nginx:1.0")

	setImage(t, ns, "nginx:2.0")
	r := run(t, ns, 2, 3*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	for _, m := range members {
		waitImage(t, ns, m, "nginx:2.0", true)
	}
	// Each stage started after the previous one was healthy and soaked.
	u1, u2, u3 := clusterStatus(r, "member1"), clusterStatus(r, "member2"), clusterStatus(r, "member3")
	if u1 == nil || u2 == nil || u3 == nil || u1.UpdateTime == nil || u2.UpdateTime == nil || u3.UpdateTime == nil {
		t.Fatalf("run status %+v: want an update time for each member", r.Status.Stages)
	}
	s1 := r.Status.Stages[0]
	if s1.HealthySince == nil || u2.UpdateTime.Time.Before(s1.HealthySince.Add(soak)) || u3.UpdateTime.Before(u2.UpdateTime) {
		t.Errorf("updates member1 %s, member2 %s, member3 %s, stage 1 healthy since %v: want member2 after member1's %s soak, member3 after member2",
			u1.UpdateTime, u2.UpdateTime, u3.UpdateTime, s1.HealthySince, soak)
	}
	if c := meta.FindStatusCondition(r.Status.Conditions, flotillav1alpha1.RolloutConditionCompleted); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Completed condition %+v, want True", c)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		ev, err := templateEvents(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		for _, want := range []string{"RolloutStarted", "StageStarted", "StageSucceeded", "RolloutCompleted"} {
			if ev[want] == 0 {
				return fmt.Sprintf("template events %v, want %s", ev, want)
			}
		}
		return ""
	})

	// A change whose pods never become Ready: member1 gets it and the run
	// halts at the deadline; member2 and member3 are not written.
	before := map[string]string{}
	for _, m := range members[1:] {
		d, err := memberDeployment(t.Context(), t, ns, m)
		if err != nil {
			t.Fatal(err)
		}
		before[m] = d.ResourceVersion
	}
	setImage(t, ns, env.FakeImageRegistry+"/nginx:3.0")
	waitImage(t, ns, "member1", env.FakeImageRegistry+"/nginx:3.0", false)
	r = run(t, ns, 3, 2*time.Minute, phase(flotillav1alpha1.RolloutHalted))
	halted := meta.FindStatusCondition(r.Status.Conditions, flotillav1alpha1.RolloutConditionHalted)
	if halted == nil || halted.Status != metav1.ConditionTrue || !strings.Contains(halted.Message, "member1") || r.Status.CurrentStage != "s1" {
		t.Errorf("Halted condition %+v at stage %s: want True naming member1 at s1", halted, r.Status.CurrentStage)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		ev, err := templateEvents(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if ev["StageFailed"] == 0 || ev["RolloutHalted"] == 0 {
			return fmt.Sprintf("template events %v, want StageFailed and RolloutHalted", ev)
		}
		return ""
	})
	out, err := framework.Kubectl(t, "get", "rolloutruns", "-n", ns)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); err != nil || len(lines) < 3 ||
		strings.Join(strings.Fields(lines[0]), " ") != "NAME RESOURCE STRATEGY STAGE PHASE AGE" ||
		!strings.HasPrefix(strings.Join(strings.Fields(lines[2]), " "), r.Name+" Deployment/app "+ns+" s1 Halted ") {
		t.Errorf("kubectl get rolloutruns: %v, want NAME RESOURCE STRATEGY STAGE PHASE AGE with %s halted at s1:\n%s", err, r.Name, out)
	}
	for _, m := range members[1:] {
		d, err := memberDeployment(t.Context(), t, ns, m)
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:2.0" || d.ResourceVersion != before[m] {
			t.Errorf("%s runs %s at resourceVersion %s, want nginx:2.0 untouched at %s", m, img, d.ResourceVersion, before[m])
		}
	}

	// The fix rolls out from the first stage again and completes.
	setImage(t, ns, "nginx:4.0")
	run(t, ns, 4, 3*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	for _, m := range members {
		waitImage(t, ns, m, "nginx:4.0", true)
	}
	if r, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Get(t.Context(), r.Name, metav1.GetOptions{}); err != nil || r.Status.Phase != flotillav1alpha1.RolloutHalted {
		t.Errorf("the halted run: %v, phase %v, want it still Halted", err, r.Status.Phase)
	}
}

// TestApprovalGateAndUndo: a stage with an approval gate waits for a
// person with member2 and member3 on the old image; once approved the run
// completes. Undo (the template back to the previous revision) rolls the
// old image back out stage by stage, as a new run of the renumbered
// revision.
func TestApprovalGateAndUndo(t *testing.T) {
	ns := setup(t, "rollout-approval", stages("", "    before: [{type: Approval}]\n"), "nginx:1.0")
	setImage(t, ns, "nginx:2.0")
	r := run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	waitImage(t, ns, "member1", "nginx:2.0", true)
	if st := r.Status.Stages[1]; st.Name != "s2" || st.Phase != flotillav1alpha1.StageWaitingApproval || st.WaitingFor != flotillav1alpha1.GateBefore {
		t.Errorf("stage 2 %+v, want s2 waiting for approval Before", st)
	}
	for _, m := range members[1:] {
		d, err := memberDeployment(t.Context(), t, ns, m)
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.0" {
			t.Errorf("%s runs %s while stage s2 waits for approval, want nginx:1.0", m, img)
		}
	}
	approve := `{"spec":{"approvals":[{"stage":"s2","gate":"Before","approver":"e2e"}]}}`
	if _, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Patch(t.Context(), r.Name, types.MergePatchType, []byte(approve), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	for _, m := range members {
		waitImage(t, ns, m, "nginx:2.0", true)
	}
	framework.Eventually(t, 30*time.Second, func(ctx context.Context) string {
		ev, err := templateEvents(ctx, t, ns)
		if err != nil {
			return err.Error()
		}
		if ev["WaitingForApproval"] == 0 || ev["StageApproved"] == 0 {
			return fmt.Sprintf("template events %v, want WaitingForApproval and StageApproved", ev)
		}
		return ""
	})

	// Undo: the template as revision 1 was; the revision becomes number 3
	// and its run waits at the same gate.
	setImage(t, ns, "nginx:1.0")
	r = run(t, ns, 3, 2*time.Minute, phase(flotillav1alpha1.RolloutWaitingForApproval))
	if r.Spec.ToRevision != r.Spec.FromRevision && !strings.HasPrefix(r.Spec.ToRevision, binding+"-") {
		t.Errorf("undo run to %s from %s", r.Spec.ToRevision, r.Spec.FromRevision)
	}
	revs, err := framework.Karmada(t).FlotillaV1alpha1().ResourceRevisions(ns).List(t.Context(), metav1.ListOptions{LabelSelector: flotillav1alpha1.BindingLabel + "=" + binding})
	if err != nil || len(revs.Items) != 2 {
		t.Fatalf("revisions: %v, %d, want 2 (the undo reuses the first)", err, len(revs.Items))
	}
	waitImage(t, ns, "member1", "nginx:1.0", true)
	if _, err := framework.Karmada(t).FlotillaV1alpha1().RolloutRuns(ns).Patch(t.Context(), r.Name, types.MergePatchType,
		[]byte(`{"spec":{"approvals":[{"stage":"s2","gate":"Before"}]}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	run(t, ns, 3, 2*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	for _, m := range members {
		waitImage(t, ns, m, "nginx:1.0", true)
	}
}

// TestClustersInNoStageHoldTheRun: a strategy leaving member3 out of every
// stage holds the run before it updates anything, naming member3.
func TestClustersInNoStageHoldTheRun(t *testing.T) {
	ns := setup(t, "rollout-unstaged", "  - name: s1\n    clusters: {names: [member1, member2]}\n", "nginx:1.0")
	setImage(t, ns, "nginx:2.0")
	run(t, ns, 2, time.Minute, func(r *flotillav1alpha1.RolloutRun) string {
		c := meta.FindStatusCondition(r.Status.Conditions, flotillav1alpha1.RolloutConditionProgressing)
		if c == nil || c.Reason != "ClustersInNoStage" || !strings.Contains(c.Message, "member3") {
			return "want Progressing False with ClustersInNoStage naming member3"
		}
		return ""
	})
	time.Sleep(3 * time.Second)
	for _, m := range members {
		d, err := memberDeployment(t.Context(), t, ns, m)
		if err != nil {
			t.Fatal(err)
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != "nginx:1.0" {
			t.Errorf("%s runs %s, want nginx:1.0 while the run is held", m, img)
		}
	}
	// A strategy that holds every cluster lets it go on.
	framework.Apply(t, fmt.Sprintf(`apiVersion: flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: %s}
spec:
  stages:
  - name: s1
    clusters: {names: [member1, member2]}
  - name: rest
    clusters: {labelSelector: {}}
`, ns))
	run(t, ns, 2, 2*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	for _, m := range members {
		waitImage(t, ns, m, "nginx:2.0", true)
	}
}

// TestRolloutResumesAfterKill: flotilla-apiserver killed with SIGKILL while
// stage 1 soaks; once it is back the run goes on where it was and
// completes, each member's Deployment written once for the change (its
// generation up by one).
func TestRolloutResumesAfterKill(t *testing.T) {
	ns := setup(t, "rollout-kill", stages("    soakTime: 15s\n"), "nginx:1.0")
	gen := map[string]int64{}
	for _, m := range members {
		d, err := memberDeployment(t.Context(), t, ns, m)
		if err != nil {
			t.Fatal(err)
		}
		gen[m] = d.Generation
	}
	setImage(t, ns, "nginx:2.0")
	r := run(t, ns, 2, 2*time.Minute, func(r *flotillav1alpha1.RolloutRun) string {
		if len(r.Status.Stages) == 0 || r.Status.Stages[0].Phase != flotillav1alpha1.StageSoaking {
			return "want stage s1 soaking"
		}
		return ""
	})
	soakEnd := r.Status.Stages[0].SoakEnd.Time
	flotilla := framework.Env.Host.Process(env.FlotillaComponent)
	flotilla.Kill()
	if err := flotilla.Restart(); err != nil {
		t.Fatal(err)
	}
	r = run(t, ns, 2, 3*time.Minute, phase(flotillav1alpha1.RolloutCompleted))
	if u2 := clusterStatus(r, "member2"); u2 == nil || u2.UpdateTime == nil || u2.UpdateTime.Time.Before(soakEnd) {
		t.Errorf("member2 updated %+v, want after stage 1's soak ended at %s", u2, soakEnd)
	}
	for _, m := range members {
		waitImage(t, ns, m, "nginx:2.0", true)
		d, err := memberDeployment(t.Context(), t, ns, m)
		if err != nil {
			t.Fatal(err)
		}
		if d.Generation != gen[m]+1 {
			t.Errorf("%s Deployment generation %d, want %d: written once for the change", m, d.Generation, gen[m]+1)
		}
	}
}
