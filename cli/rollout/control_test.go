package rollout

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func approvers(r *flotillav1alpha1.RolloutRun) string {
	var names []string
	for _, a := range r.Spec.Approvals {
		names = append(names, a.Approver)
	}
	return strings.Join(names, ",")
}

// patches records the patches of RolloutRuns as "<name> <type> <patch>".
func patches(f *fixture) *[]string {
	var got []string
	f.flotilla.PrependReactor("patch", "rolloutruns", func(a clienttesting.Action) (bool, runtime.Object, error) {
		p := a.(clienttesting.PatchAction)
		got = append(got, p.GetName()+" "+string(p.GetPatchType())+" "+string(p.GetPatch()))
		return false, nil, nil
	})
	return &got
}

func TestSetSpec(t *testing.T) {
	t.Parallel()
	progressing := run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing)...)
	paused := run("3", flotillav1alpha1.RolloutPaused, "canary", stages(flotillav1alpha1.StageProgressing)...)
	paused.Spec.Paused = true
	completed := run("3", flotillav1alpha1.RolloutCompleted, "rest")
	for _, tc := range []struct {
		name    string
		verb    func(*Command, context.Context) error
		run     *flotillav1alpha1.RolloutRun
		patch   string
		out     string
		wantErr string
	}{
		{name: "pause", verb: (*Command).Pause, run: progressing,
			patch: `nginx-deployment-3 application/merge-patch+json {"spec":{"paused":true}}`, out: `rolloutrun "nginx-deployment-3" paused`},
		{name: "pause a paused run", verb: (*Command).Pause, run: paused, out: `rolloutrun "nginx-deployment-3" already paused`},
		{name: "resume", verb: (*Command).Resume, run: paused,
			patch: `nginx-deployment-3 application/merge-patch+json {"spec":{"paused":false}}`, out: `rolloutrun "nginx-deployment-3" resumed`},
		{name: "resume a running run", verb: (*Command).Resume, run: progressing, out: `rolloutrun "nginx-deployment-3" already resumed`},
		{name: "abort", verb: (*Command).Abort, run: paused,
			patch: `nginx-deployment-3 application/merge-patch+json {"spec":{"abort":true}}`, out: `rolloutrun "nginx-deployment-3" aborted`},
		{name: "pause a completed run", verb: (*Command).Pause, run: completed, wantErr: `rolloutrun "nginx-deployment-3" is over (Completed)`},
		{name: "abort a completed run", verb: (*Command).Abort, run: completed, wantErr: `rolloutrun "nginx-deployment-3" is over (Completed)`},
		{name: "no run", verb: (*Command).Pause, wantErr: "no rollout was started for deployment/nginx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var objs []runtime.Object
			if tc.run != nil {
				objs = append(objs, tc.run.DeepCopy())
			}
			f := newFixture(t, template(true), objs...)
			got := patches(f)
			err := tc.verb(f.Command, context.Background())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if len(*got) != 0 {
					t.Errorf("patched %q", *got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			if tc.patch != "" {
				want = []string{tc.patch}
			}
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("patches (-want +got):\n%s", diff)
			}
			if strings.TrimSpace(f.out.String()) != tc.out {
				t.Errorf("output %q, want %q", f.out.String(), tc.out)
			}
		})
	}
}

func TestChooseApproval(t *testing.T) {
	t.Parallel()
	waiting := func(stage int, gate flotillav1alpha1.GatePosition) *flotillav1alpha1.RolloutRun {
		r := run("3", flotillav1alpha1.RolloutWaitingForApproval, "canary", stages(flotillav1alpha1.StageSucceeded)...)
		r.Status.Stages[stage].Phase, r.Status.Stages[stage].WaitingFor = flotillav1alpha1.StageWaitingApproval, gate
		return r
	}
	progressing := run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing)...)
	for _, tc := range []struct {
		name    string
		run     *flotillav1alpha1.RolloutRun
		opts    ApproveOptions
		want    flotillav1alpha1.RolloutApproval
		wantErr string
	}{
		{name: "the waiting stage, after it", run: waiting(0, flotillav1alpha1.GateAfter),
			want: flotillav1alpha1.RolloutApproval{Stage: "canary", Gate: flotillav1alpha1.GateAfter}},
		{name: "the waiting stage, before it", run: waiting(1, flotillav1alpha1.GateBefore),
			want: flotillav1alpha1.RolloutApproval{Stage: "europe", Gate: flotillav1alpha1.GateBefore}},
		{name: "the waiting stage named", run: waiting(1, flotillav1alpha1.GateBefore), opts: ApproveOptions{Stage: "europe"},
			want: flotillav1alpha1.RolloutApproval{Stage: "europe", Gate: flotillav1alpha1.GateBefore}},
		{name: "in advance", run: progressing, opts: ApproveOptions{Stage: "rest", Gate: flotillav1alpha1.GateBefore},
			want: flotillav1alpha1.RolloutApproval{Stage: "rest", Gate: flotillav1alpha1.GateBefore}},
		{name: "in advance, before the status lists the stages", run: run("3", "", ""), opts: ApproveOptions{Stage: "canary", Gate: flotillav1alpha1.GateAfter},
			want: flotillav1alpha1.RolloutApproval{Stage: "canary", Gate: flotillav1alpha1.GateAfter}},
		{name: "nothing waits", run: progressing, wantErr: `rolloutrun "nginx-deployment-3" is not waiting for an approval (phase Progressing); to approve a gate in advance, name it with --stage and --gate`},
		{name: "a stage not waiting, without a gate", run: progressing, opts: ApproveOptions{Stage: "rest"}, wantErr: "stage rest of rolloutrun \"nginx-deployment-3\" is not waiting for an approval; to approve it in advance, say which gate with --gate Before|After"},
		{name: "unknown stage", run: progressing, opts: ApproveOptions{Stage: "asia", Gate: flotillav1alpha1.GateBefore}, wantErr: `rolloutrun "nginx-deployment-3" has no stage "asia" (its stages: canary, europe, rest)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ChooseApproval(tc.run, tc.opts)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("approval (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApprove(t *testing.T) {
	t.Parallel()
	earlier := metav1.NewTime(time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC))
	waiting := run("3", flotillav1alpha1.RolloutWaitingForApproval, "canary", stages(flotillav1alpha1.StageWaitingApproval)...)
	waiting.Status.Stages[0].WaitingFor = flotillav1alpha1.GateAfter
	waiting.Spec.Approvals = []flotillav1alpha1.RolloutApproval{{Stage: "europe", Gate: flotillav1alpha1.GateBefore, Approver: "bob", Time: &earlier}}
	f := newFixture(t, template(true), waiting.DeepCopy())
	kube := kubefake.NewClientset()
	kube.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, &authenticationv1.SelfSubjectReview{Status: authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: "alice"}}}, nil
	})
	f.Reviews = kube.AuthenticationV1()
	// The first patch meets a newer run: carol approved europe's After gate
	// meanwhile. The approval is recomputed from the run read again.
	carols := flotillav1alpha1.RolloutApproval{Stage: "europe", Gate: flotillav1alpha1.GateAfter, Approver: "carol", Time: &earlier}
	conflicts := 1
	f.flotilla.PrependReactor("patch", "rolloutruns", func(clienttesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		newer := waiting.DeepCopy()
		newer.ResourceVersion = "6"
		newer.Spec.Approvals = append(newer.Spec.Approvals, carols)
		if err := f.flotilla.Tracker().Update(flotillav1alpha1.SchemeGroupVersion.WithResource("rolloutruns"), newer, "web"); err != nil {
			t.Error(err)
		}
		return true, nil, apierrors.NewConflict(flotillav1alpha1.Resource("rolloutruns"), "nginx-deployment-3", nil)
	})
	got := patches(f)
	if err := f.Approve(context.Background(), ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "rolloutrun \"nginx-deployment-3\" approved: stage canary (After)\n"; f.out.String() != want {
		t.Errorf("output %q, want %q", f.out.String(), want)
	}
	const (
		bob   = `{"stage":"europe","gate":"Before","approver":"bob","time":"2026-11-29T05:00:00Z"}`
		carol = `{"stage":"europe","gate":"After","approver":"carol","time":"2026-11-29T05:00:00Z"}`
		alice = `{"stage":"canary","gate":"After","approver":"alice","time":"2026-11-29T06:00:00Z"}`
	)
	want := []string{
		`nginx-deployment-3 application/merge-patch+json {"metadata":{"resourceVersion":"5"},"spec":{"approvals":[` + bob + `,` + alice + `]}}`,
		`nginx-deployment-3 application/merge-patch+json {"metadata":{"resourceVersion":"6"},"spec":{"approvals":[` + bob + `,` + carol + `,` + alice + `]}}`,
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("patches (-want +got):\n%s", diff)
	}
	after, err := f.runs("web").Get(context.Background(), "nginx-deployment-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if names := approvers(after); names != "bob,carol,alice" {
		t.Errorf("approvers %s, want bob,carol,alice", names)
	}

	// Approving again is a no-op.
	f.out.Reset()
	*got = nil
	if err := f.Approve(context.Background(), ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	if want := "rolloutrun \"nginx-deployment-3\": stage canary (After) already approved\n"; f.out.String() != want || len(*got) != 0 {
		t.Errorf("output %q patches %q, want %q and none", f.out.String(), *got, want)
	}
}

// TestApprovalPatch: the patch is a precondition on the run's
// resourceVersion plus the whole list, so that it cannot drop an approval
// it did not see.
func TestApprovalPatch(t *testing.T) {
	t.Parallel()
	r := run("3", flotillav1alpha1.RolloutWaitingForApproval, "canary")
	r.ResourceVersion = "77"
	p, err := ApprovalPatch(r, flotillav1alpha1.RolloutApproval{Stage: "canary", Gate: flotillav1alpha1.GateBefore})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(p, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"resourceVersion": "77"},
		"spec":     map[string]any{"approvals": []any{map[string]any{"stage": "canary", "gate": "Before"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	if len(r.Spec.Approvals) != 0 {
		t.Errorf("ApprovalPatch changed the run's approvals: %+v", r.Spec.Approvals)
	}
}

func TestApproveWithoutReview(t *testing.T) {
	t.Parallel()
	waiting := run("3", flotillav1alpha1.RolloutWaitingForApproval, "canary", stages(flotillav1alpha1.StageWaitingApproval)...)
	waiting.Status.Stages[0].WaitingFor = flotillav1alpha1.GateBefore
	f := newFixture(t, template(true), waiting)
	kube := kubefake.NewClientset()
	kube.PrependReactor("create", "selfsubjectreviews", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(authenticationv1.Resource("selfsubjectreviews"), "")
	})
	f.Reviews = kube.AuthenticationV1()
	if err := f.Approve(context.Background(), ApproveOptions{}); err != nil {
		t.Fatal(err)
	}
	after, err := f.runs("web").Get(context.Background(), "nginx-deployment-3", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []flotillav1alpha1.RolloutApproval{{Stage: "canary", Gate: flotillav1alpha1.GateBefore, Time: &metav1.Time{Time: f.Now()}}}
	if diff := cmp.Diff(want, after.Spec.Approvals); diff != "" {
		t.Errorf("approvals (-want +got):\n%s", diff)
	}
}

// Approving a gate in advance needs the strategy to have an Approval gate
// there; a strategy the caller may not read is not checked.
func TestApproveInAdvanceChecksTheStrategy(t *testing.T) {
	t.Parallel()
	strategy := &flotillav1alpha1.RolloutStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "three-stages"},
		Spec: flotillav1alpha1.RolloutStrategySpec{Stages: []flotillav1alpha1.RolloutStage{
			{Name: "canary", After: []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateApproval}}},
			{Name: "europe", Before: []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateWait, Duration: &metav1.Duration{Duration: time.Minute}}}},
			{Name: "rest"},
		}},
	}
	tests := []struct {
		name      string
		opts      ApproveOptions
		forbidden bool
		wantErr   string
	}{
		{name: "an Approval gate", opts: ApproveOptions{Stage: "canary", Gate: flotillav1alpha1.GateAfter}},
		{name: "a Wait gate only", opts: ApproveOptions{Stage: "europe", Gate: flotillav1alpha1.GateBefore},
			wantErr: "stage europe of RolloutStrategy three-stages has no Approval gate Before: there is nothing to approve"},
		{name: "no gate", opts: ApproveOptions{Stage: "rest", Gate: flotillav1alpha1.GateAfter},
			wantErr: "stage rest of RolloutStrategy three-stages has no Approval gate After"},
		{name: "the strategy unreadable: not checked", opts: ApproveOptions{Stage: "rest", Gate: flotillav1alpha1.GateAfter}, forbidden: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			progressing := run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing)...)
			f := newFixture(t, template(true), progressing, strategy.DeepCopy())
			if tc.forbidden {
				f.flotilla.PrependReactor("get", "rolloutstrategies", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(flotillav1alpha1.Resource("rolloutstrategies"), "three-stages", errors.New("no"))
				})
			}
			err := f.Approve(context.Background(), tc.opts)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Approve: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Approve: %v, want %q", err, tc.wantErr)
			}
			after, err := f.runs("web").Get(context.Background(), "nginx-deployment-3", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if approved := len(after.Spec.Approvals) == 1; approved != (tc.wantErr == "") {
				t.Errorf("approvals %v, want one only when the gate exists", after.Spec.Approvals)
			}
		})
	}
}
