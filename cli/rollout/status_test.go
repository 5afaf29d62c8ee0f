package rollout

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestProgress(t *testing.T) {
	t.Parallel()
	const (
		healthy   = flotillav1alpha1.ClusterHealthy
		unhealthy = flotillav1alpha1.ClusterUnhealthy
		updating  = flotillav1alpha1.ClusterUpdating
		pending   = flotillav1alpha1.ClusterPending
	)
	soakEnd := metav1.NewTime(time.Date(2026, 11, 29, 6, 5, 0, 0, time.UTC))
	for _, tc := range []struct {
		name    string
		run     *flotillav1alpha1.RolloutRun
		edit    func(*flotillav1alpha1.RolloutRun)
		want    string
		done    bool
		wantErr string
	}{{
		name: "not started",
		run:  run("3", "", ""),
		want: `Waiting for rollout "nginx-deployment-3" to start...`,
	}, {
		name: "progressing",
		run:  run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing, updating)...),
		want: `Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3): 0 of 1 clusters healthy...`,
	}, {
		name: "progressing with an unhealthy cluster",
		run:  run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing, healthy, unhealthy, pending)...),
		want: `Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3): 1 of 3 clusters healthy (1 unhealthy)...`,
	}, {
		name: "soaking",
		run:  run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageSoaking, healthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) { r.Status.Stages[0].SoakEnd = &soakEnd },
		want: `Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3): soaking until 2026-11-29T06:05:00Z...`,
	}, {
		name: "waiting for approval after the stage",
		run:  run("3", flotillav1alpha1.RolloutWaitingForApproval, "canary", stages(flotillav1alpha1.StageWaitingApproval, healthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) { r.Status.Stages[0].WaitingFor = flotillav1alpha1.GateAfter },
		want: `Waiting for approval of stage canary (After): flotillactl rollout approve deployment/nginx -n web --stage canary`,
	}, {
		name: "waiting for approval before a stage that is not the current one",
		run:  run("3", flotillav1alpha1.RolloutWaitingForApproval, "canary", stages(flotillav1alpha1.StageSucceeded, healthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) {
			r.Status.Stages[1].Phase, r.Status.Stages[1].WaitingFor = flotillav1alpha1.StageWaitingApproval, flotillav1alpha1.GateBefore
		},
		want: `Waiting for approval of stage europe (Before): flotillactl rollout approve deployment/nginx -n web --stage europe`,
	}, {
		name: "waiting at a Wait gate before the stage",
		run:  run("3", flotillav1alpha1.RolloutWaiting, "rest", stages(flotillav1alpha1.StageSucceeded, healthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) {
			r.Status.Stages[1].Phase = flotillav1alpha1.StageSucceeded
			r.Status.Stages[2].Phase, r.Status.Stages[2].WaitingFor, r.Status.Stages[2].WaitUntil = flotillav1alpha1.StageWaiting, flotillav1alpha1.GateBefore, &soakEnd
		},
		want: `Waiting for rollout "nginx-deployment-3" to finish: stage rest (3 of 3) waiting until 2026-11-29T06:05:00Z before it starts...`,
	}, {
		name: "waiting at a Wait gate after the stage",
		run:  run("3", flotillav1alpha1.RolloutWaiting, "canary", stages(flotillav1alpha1.StageWaiting, healthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) {
			r.Status.Stages[0].WaitingFor, r.Status.Stages[0].WaitUntil = flotillav1alpha1.GateAfter, &soakEnd
		},
		want: `Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3) succeeded; waiting until 2026-11-29T06:05:00Z before the next stage...`,
	}, {
		name: "paused",
		run:  run("3", flotillav1alpha1.RolloutPaused, "europe", stages(flotillav1alpha1.StageSucceeded, healthy)...),
		want: `Waiting for rollout "nginx-deployment-3" to finish: paused at stage europe (2 of 3); resume it with: flotillactl rollout resume deployment/nginx -n web`,
	}, {
		name: "spec change not observed yet",
		run:  run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing, healthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) { r.Generation, r.Status.ObservedGeneration = 2, 1 },
		want: `Waiting for rollout "nginx-deployment-3" spec update to be observed...`,
	}, {
		name: "completed",
		run:  run("3", flotillav1alpha1.RolloutCompleted, "rest", stages(flotillav1alpha1.StageSucceeded, healthy)...),
		want: `rollout "nginx-deployment-3" successfully rolled out`, done: true,
	}, {
		name: "halted: the failed stage and the condition's message",
		run:  run("3", flotillav1alpha1.RolloutHalted, "canary", stages(flotillav1alpha1.StageFailed, unhealthy)...),
		edit: func(r *flotillav1alpha1.RolloutRun) {
			r.Status.Conditions = []metav1.Condition{{Type: flotillav1alpha1.RolloutConditionHalted, Status: metav1.ConditionTrue, Reason: "StageFailed",
				Message: "stage canary failed: member1: Unhealthy (deployment not available)"}}
		},
		wantErr: `rollout "nginx-deployment-3" halted at stage canary: stage canary failed: member1: Unhealthy (deployment not available)`,
	}, {
		name:    "halted without a condition",
		run:     run("3", flotillav1alpha1.RolloutHalted, "canary", stages(flotillav1alpha1.StageFailed, unhealthy)...),
		wantErr: `rollout "nginx-deployment-3" halted at stage canary: a stage failed`,
	}, {
		name:    "aborted",
		run:     run("3", flotillav1alpha1.RolloutAborted, "europe", stages(flotillav1alpha1.StageSucceeded, healthy)...),
		wantErr: `rollout "nginx-deployment-3" was aborted at stage europe`,
	}, {
		name:    "superseded",
		run:     run("3", flotillav1alpha1.RolloutSuperseded, "canary", stages(flotillav1alpha1.StageProgressing, healthy)...),
		wantErr: `rollout "nginx-deployment-3" was superseded by a newer rollout of deployment/nginx: flotillactl rollout status deployment/nginx -n web`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			if tc.edit != nil {
				tc.edit(tc.run)
			}
			line, done, err := f.Progress(tc.run)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if line != tc.want || done != tc.done {
				t.Errorf("Progress =\n%q %v, want\n%q %v", line, done, tc.want, tc.done)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	progressing := run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing, flotillav1alpha1.ClusterUpdating)...)
	halted := run("3", flotillav1alpha1.RolloutHalted, "canary", stages(flotillav1alpha1.StageFailed, flotillav1alpha1.ClusterUnhealthy)...)
	older := run("2", flotillav1alpha1.RolloutCompleted, "rest")
	older.CreationTimestamp = metav1.Unix(1, 0)
	progressing.CreationTimestamp, halted.CreationTimestamp = metav1.Unix(2, 0), metav1.Unix(2, 0)
	// A newer run of another template, in the same namespace.
	other := run("9", flotillav1alpha1.RolloutHalted, "canary")
	other.Name, other.Labels[flotillav1alpha1.BindingLabel], other.CreationTimestamp = "other-deployment-9", "other-deployment", metav1.Unix(3, 0)
	for _, tc := range []struct {
		name     string
		template bool
		runs     []*flotillav1alpha1.RolloutRun
		opts     StatusOptions
		want     string
		wantErr  string
	}{
		{name: "no template", wantErr: `deployments.apps "nginx" not found`},
		{name: "no run", template: true, runs: []*flotillav1alpha1.RolloutRun{other}, opts: StatusOptions{Watch: true}, want: "no rollout was started for deployment/nginx"},
		{name: "once: the newest run", template: true, runs: []*flotillav1alpha1.RolloutRun{older, progressing, other},
			want: `Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3): 0 of 1 clusters healthy...`},
		{name: "once: halted", template: true, runs: []*flotillav1alpha1.RolloutRun{halted}, wantErr: `rollout "nginx-deployment-3" halted at stage canary`},
		{name: "watch: halted", template: true, runs: []*flotillav1alpha1.RolloutRun{halted}, opts: StatusOptions{Watch: true}, wantErr: `rollout "nginx-deployment-3" halted at stage canary`},
		{name: "watch: completed", template: true, runs: []*flotillav1alpha1.RolloutRun{older}, opts: StatusOptions{Watch: true}, want: `rollout "nginx-deployment-2" successfully rolled out`},
		{name: "watch: timeout", template: true, runs: []*flotillav1alpha1.RolloutRun{progressing}, opts: StatusOptions{Watch: true, Timeout: 100 * time.Millisecond},
			want: "0 of 1 clusters healthy", wantErr: `timed out waiting for rollout "nginx-deployment-3" to finish`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var objs []runtime.Object
			for _, r := range tc.runs {
				objs = append(objs, r.DeepCopy())
			}
			f := newFixture(t, template(tc.template), objs...)
			err := f.Status(context.Background(), tc.opts)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			if !strings.Contains(f.out.String(), tc.want) {
				t.Errorf("output %q, want %q", f.out.String(), tc.want)
			}
		})
	}
}

// TestStatusFollows: the watch prints each new progress once and ends
// when the run completes.
func TestStatusFollows(t *testing.T) {
	t.Parallel()
	r := run("3", flotillav1alpha1.RolloutProgressing, "canary", stages(flotillav1alpha1.StageProgressing, flotillav1alpha1.ClusterUpdating)...)
	f := newFixture(t, template(true), r.DeepCopy())
	out := &syncBuffer{}
	f.Out = out
	watching := make(chan struct{}, 1)
	f.flotilla.PrependWatchReactor("rolloutruns", func(a clienttesting.Action) (bool, watch.Interface, error) {
		if fs := a.(clienttesting.WatchActionImpl).WatchRestrictions.Fields.String(); fs != "metadata.name=nginx-deployment-3" {
			t.Errorf("watch with field selector %q, want the run's name", fs)
		}
		watching <- struct{}{}
		return false, nil, nil // the fake's own reactor serves it
	})
	runs := f.flotilla.FlotillaV1alpha1().RolloutRuns("web")
	done := make(chan error)
	go func() { done <- f.Status(context.Background(), StatusOptions{Watch: true, Timeout: time.Minute}) }()
	<-watching
	for i, step := range []func(*flotillav1alpha1.RolloutRun){
		func(r *flotillav1alpha1.RolloutRun) {
			r.Status.Stages[0].Clusters[0].Health = flotillav1alpha1.ClusterHealthy
		},
		func(r *flotillav1alpha1.RolloutRun) { r.Labels["touched"] = "true" }, // same progress: not printed again
		func(r *flotillav1alpha1.RolloutRun) { r.Status.Phase = flotillav1alpha1.RolloutCompleted },
	} {
		if i < 2 {
			out.waitLines(t, i+1)
		}
		cur, err := runs.Get(context.Background(), r.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		step(cur)
		if _, err := runs.Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := `Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3): 0 of 1 clusters healthy...
Waiting for rollout "nginx-deployment-3" to finish: stage canary (1 of 3): 1 of 1 clusters healthy...
rollout "nginx-deployment-3" successfully rolled out
`
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

// syncBuffer is a buffer one goroutine writes while another reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitLines waits until n lines were written.
func (b *syncBuffer) waitLines(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(b.String(), "\n") < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d lines, got %q", n, b.String())
		}
	}
}
