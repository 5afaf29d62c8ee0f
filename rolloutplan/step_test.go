package rolloutplan

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

var t0 = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

func stage(name string, clusters ...string) flotillav1alpha1.RolloutStage {
	return flotillav1alpha1.RolloutStage{Name: name, Clusters: flotillav1alpha1.StageClusters{Names: clusters},
		ProgressDeadline: &metav1.Duration{Duration: 10 * time.Minute}, SoakTime: &metav1.Duration{}, MaxFailures: ptr.To[int32](0)}
}

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(t0.Add(d)); return &t }

const (
	oldRev = "aaaaaaaaaa"
	newRev = "bbbbbbbbbb"
)

// member is a cluster on the old revision unless health is given: then it
// runs the new one with that health.
func member(name string, health flotillav1alpha1.ClusterHealth) Member {
	m := Member{Cluster: Cluster{Name: name}, Revision: oldRev}
	if health != "" {
		m.Revision, m.Health = newRev, health
	}
	return m
}

// stageDone is the stored status of a stage that succeeded.
func stageDone(name string) flotillav1alpha1.StageStatus {
	return flotillav1alpha1.StageStatus{Name: name, Phase: flotillav1alpha1.StageSucceeded, StartTime: at(-time.Hour), CompletionTime: at(-time.Hour)}
}

func stageStarted(name string, started time.Duration) flotillav1alpha1.StageStatus {
	return flotillav1alpha1.StageStatus{Name: name, Phase: flotillav1alpha1.StageProgressing, StartTime: at(started)}
}

func TestStep(t *testing.T) {
	t.Parallel()
	three := []flotillav1alpha1.RolloutStage{stage("s1", "m1"), stage("s2", "m2"), stage("s3", "m3")}
	started := flotillav1alpha1.RolloutRunStatus{StartTime: at(-time.Hour), Phase: flotillav1alpha1.RolloutProgressing}
	withStages := func(st ...flotillav1alpha1.StageStatus) flotillav1alpha1.RolloutRunStatus {
		s := *started.DeepCopy()
		s.Stages = st
		return s
	}
	modify := func(stages []flotillav1alpha1.RolloutStage, i int, f func(*flotillav1alpha1.RolloutStage)) []flotillav1alpha1.RolloutStage {
		out := make([]flotillav1alpha1.RolloutStage, len(stages))
		for j := range stages {
			out[j] = *stages[j].DeepCopy()
		}
		f(&out[i])
		return out
	}
	tests := []struct {
		name        string
		stages      []flotillav1alpha1.RolloutStage
		members     []Member
		spec        flotillav1alpha1.RolloutRunSpec
		status      flotillav1alpha1.RolloutRunStatus
		wantUpdate  []string
		wantPhase   flotillav1alpha1.RolloutPhase
		wantStage   string
		wantEvents  []string
		wantRequeue time.Duration
		// wantCondition is type=reason of a condition that must be True.
		wantCondition string
		wantMessage   string
	}{{
		name:       "a new run updates the first stage",
		stages:     three,
		members:    []Member{member("m1", ""), member("m2", ""), member("m3", "")},
		wantUpdate: []string{"m1"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1",
		wantEvents: []string{ReasonRolloutStarted, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
		wantCondition: "Progressing=StageProgressing",
	}, {
		name:      "an updating stage waits",
		stages:    three,
		members:   []Member{member("m1", flotillav1alpha1.ClusterUpdating), member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1", wantRequeue: 9 * time.Minute,
		wantMessage: "Stage s1: 0 of 1 clusters healthy",
	}, {
		name:       "a healthy stage without soak starts the next in the same step",
		stages:     three,
		members:    []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status:     withStages(stageStarted("s1", -time.Minute)),
		wantUpdate: []string{"m2"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s2",
		wantEvents: []string{ReasonStageSucceeded, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
	}, {
		name:      "a healthy stage soaks",
		stages:    modify(three, 0, func(s *flotillav1alpha1.RolloutStage) { s.SoakTime.Duration = 5 * time.Minute }),
		members:   []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1", wantRequeue: 5 * time.Minute,
		wantCondition: "Progressing=Soaking",
	}, {
		name:    "a stage that soaked moves on",
		stages:  modify(three, 0, func(s *flotillav1alpha1.RolloutStage) { s.SoakTime.Duration = 5 * time.Minute }),
		members: []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status: withStages(flotillav1alpha1.StageStatus{Name: "s1", Phase: flotillav1alpha1.StageSoaking, StartTime: at(-10 * time.Minute),
			HealthySince: at(-6 * time.Minute), SoakEnd: at(-time.Minute)}),
		wantUpdate: []string{"m2"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s2",
		wantEvents: []string{ReasonStageSucceeded, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
	}, {
		name:    "a soak interrupted by an unhealthy cluster starts again",
		stages:  modify(three, 0, func(s *flotillav1alpha1.RolloutStage) { s.SoakTime.Duration = 5 * time.Minute }),
		members: []Member{member("m1", flotillav1alpha1.ClusterUnhealthy), member("m2", ""), member("m3", "")},
		status: withStages(flotillav1alpha1.StageStatus{Name: "s1", Phase: flotillav1alpha1.StageSoaking, StartTime: at(-3 * time.Minute),
			HealthySince: at(-2 * time.Minute), SoakEnd: at(3 * time.Minute)}),
		wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1", wantRequeue: 7 * time.Minute,
	}, {
		name:      "an unhealthy stage past its deadline halts the rollout",
		stages:    three,
		members:   []Member{{Cluster: Cluster{Name: "m1"}, Revision: newRev, Health: flotillav1alpha1.ClusterUnhealthy, Reason: "the workload is not healthy"}, member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -11*time.Minute)),
		wantPhase: flotillav1alpha1.RolloutHalted, wantStage: "s1",
		wantEvents:    []string{ReasonStageFailed, ReasonRolloutHalted},
		wantCondition: "Halted=StageFailed",
		wantMessage:   "Stage s1 failed: m1 (Unhealthy: the workload is not healthy) not healthy 10m0s after it started (maxFailures 0)",
	}, {
		name:      "a cluster still updating past the deadline fails the stage too",
		stages:    three,
		members:   []Member{member("m1", flotillav1alpha1.ClusterUpdating), member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -11*time.Minute)),
		wantPhase: flotillav1alpha1.RolloutHalted, wantStage: "s1",
		wantEvents: []string{ReasonStageFailed, ReasonRolloutHalted}, wantCondition: "Halted=StageFailed",
	}, {
		name:       "maxFailures tolerates an unhealthy cluster",
		stages:     []flotillav1alpha1.RolloutStage{modify([]flotillav1alpha1.RolloutStage{stage("s1", "m1", "m2")}, 0, func(s *flotillav1alpha1.RolloutStage) { s.MaxFailures = ptr.To[int32](1) })[0], stage("s2", "m3")},
		members:    []Member{member("m1", flotillav1alpha1.ClusterUnhealthy), member("m2", flotillav1alpha1.ClusterHealthy), member("m3", "")},
		status:     withStages(stageStarted("s1", -time.Minute)),
		wantUpdate: []string{"m3"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s2",
		wantEvents: []string{ReasonStageSucceeded, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
	}, {
		name: "maxConcurrency updates so many clusters at once",
		stages: []flotillav1alpha1.RolloutStage{modify([]flotillav1alpha1.RolloutStage{stage("s1", "m3", "m1", "m2")}, 0, func(s *flotillav1alpha1.RolloutStage) {
			c := intstr.FromString("50%")
			s.MaxConcurrency = &c
		})[0]},
		members:    []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status:     withStages(stageStarted("s1", -time.Minute)),
		wantUpdate: []string{"m2", "m3"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1", wantRequeue: 10 * time.Minute,
	}, {
		name: "maxConcurrency 1 waits for the cluster in flight",
		stages: []flotillav1alpha1.RolloutStage{modify([]flotillav1alpha1.RolloutStage{stage("s1", "m1", "m2")}, 0, func(s *flotillav1alpha1.RolloutStage) {
			c := intstr.FromInt32(1)
			s.MaxConcurrency = &c
		})[0]},
		members:   []Member{member("m1", flotillav1alpha1.ClusterUpdating), member("m2", "")},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1", wantRequeue: 9 * time.Minute,
	}, {
		name: "an approval gate before a stage waits for a person",
		stages: modify(three, 1, func(s *flotillav1alpha1.RolloutStage) {
			s.Before = []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateApproval}}
		}),
		members:   []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutWaitingForApproval, wantStage: "s2",
		wantEvents:    []string{ReasonStageSucceeded, ReasonWaitingForApproval},
		wantCondition: "WaitingForApproval=WaitingForApproval", wantMessage: "Stage s2 waits for approval (Before)",
	}, {
		name: "an approved gate lets the stage start",
		stages: modify(three, 1, func(s *flotillav1alpha1.RolloutStage) {
			s.Before = []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateApproval}}
		}),
		members: []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		spec:    flotillav1alpha1.RolloutRunSpec{Approvals: []flotillav1alpha1.RolloutApproval{{Stage: "s2", Gate: flotillav1alpha1.GateBefore}}},
		status: withStages(stageDone("s1"), flotillav1alpha1.StageStatus{Name: "s2", Phase: flotillav1alpha1.StageWaitingApproval,
			WaitingFor: flotillav1alpha1.GateBefore}),
		wantUpdate: []string{"m2"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s2",
		wantEvents: []string{ReasonStageApproved, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
	}, {
		name: "an approval of another gate does not pass this one",
		stages: modify(three, 1, func(s *flotillav1alpha1.RolloutStage) {
			s.Before = []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateApproval}}
		}),
		members: []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		spec:    flotillav1alpha1.RolloutRunSpec{Approvals: []flotillav1alpha1.RolloutApproval{{Stage: "s2", Gate: flotillav1alpha1.GateAfter}}},
		status: withStages(stageDone("s1"), flotillav1alpha1.StageStatus{Name: "s2", Phase: flotillav1alpha1.StageWaitingApproval,
			WaitingFor: flotillav1alpha1.GateBefore}),
		wantPhase: flotillav1alpha1.RolloutWaitingForApproval, wantStage: "s2",
	}, {
		name: "a wait gate after a stage holds the next",
		stages: modify(three, 0, func(s *flotillav1alpha1.RolloutStage) {
			s.After = []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateWait, Duration: &metav1.Duration{Duration: 2 * time.Minute}}}
		}),
		members:   []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutWaiting, wantStage: "s1", wantRequeue: 2 * time.Minute,
		wantCondition: "Progressing=Waiting",
	}, {
		name: "a wait gate that elapsed lets the next stage start",
		stages: modify(three, 0, func(s *flotillav1alpha1.RolloutStage) {
			s.After = []flotillav1alpha1.RolloutGate{{Type: flotillav1alpha1.GateWait, Duration: &metav1.Duration{Duration: 2 * time.Minute}}}
		}),
		members: []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status: withStages(flotillav1alpha1.StageStatus{Name: "s1", Phase: flotillav1alpha1.StageWaiting, StartTime: at(-5 * time.Minute),
			WaitingFor: flotillav1alpha1.GateAfter, WaitUntil: at(-time.Second)}),
		wantUpdate: []string{"m2"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s2",
		wantEvents: []string{ReasonStageSucceeded, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
	}, {
		name:      "a paused run updates nothing",
		stages:    three,
		members:   []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		spec:      flotillav1alpha1.RolloutRunSpec{Paused: true},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutPaused, wantStage: "s1", wantEvents: []string{ReasonRolloutPaused},
	}, {
		name:    "a resumed run goes on",
		stages:  three,
		members: []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		status: func() flotillav1alpha1.RolloutRunStatus {
			s := withStages(stageStarted("s1", -time.Minute))
			s.Phase = flotillav1alpha1.RolloutPaused
			return s
		}(),
		wantUpdate: []string{"m2"}, wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s2",
		wantEvents: []string{ReasonRolloutResumed, ReasonStageSucceeded, ReasonStageStarted}, wantRequeue: 10 * time.Minute,
	}, {
		name:      "an aborted run stops where it is",
		stages:    three,
		members:   []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", ""), member("m3", "")},
		spec:      flotillav1alpha1.RolloutRunSpec{Abort: true},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutAborted, wantStage: "s1", wantEvents: []string{ReasonRolloutAborted},
	}, {
		name:      "a cluster in no stage holds the run",
		stages:    three[:2],
		members:   []Member{member("m1", ""), member("m2", ""), member("m3", "")},
		wantPhase: flotillav1alpha1.RolloutWaiting, wantStage: "s1",
		wantEvents:    []string{ReasonRolloutStarted, ReasonClustersInNoStage},
		wantMessage:   "Clusters m3 of the placement are in no stage",
		wantCondition: "",
	}, {
		name:      "a cluster down in its stage counts as unhealthy",
		stages:    three,
		members:   []Member{{Cluster: Cluster{Name: "m1"}, Revision: newRev, Health: flotillav1alpha1.ClusterUnhealthy, Reason: "cluster is not ready"}, member("m2", ""), member("m3", "")},
		status:    withStages(stageStarted("s1", -11*time.Minute)),
		wantPhase: flotillav1alpha1.RolloutHalted, wantStage: "s1", wantEvents: []string{ReasonStageFailed, ReasonRolloutHalted},
		wantMessage: "m1 (Unhealthy: cluster is not ready)",
	}, {
		name:      "the last healthy stage completes the run",
		stages:    three,
		members:   []Member{member("m1", flotillav1alpha1.ClusterHealthy), member("m2", flotillav1alpha1.ClusterHealthy), member("m3", flotillav1alpha1.ClusterHealthy)},
		status:    withStages(stageDone("s1"), stageDone("s2"), stageStarted("s3", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutCompleted, wantStage: "s3",
		wantEvents: []string{ReasonStageSucceeded, ReasonRolloutCompleted}, wantCondition: "Completed=Completed",
	}, {
		name:    "a run that is over stays over",
		stages:  three,
		members: []Member{member("m1", ""), member("m2", ""), member("m3", "")},
		status: func() flotillav1alpha1.RolloutRunStatus {
			s := withStages(stageStarted("s1", -time.Minute))
			s.Phase = flotillav1alpha1.RolloutHalted
			s.CurrentStage = "s1"
			return s
		}(),
		wantPhase: flotillav1alpha1.RolloutHalted, wantStage: "s1",
	}, {
		name:      "a cluster new to the placement runs the template as it is",
		stages:    three,
		members:   []Member{member("m1", flotillav1alpha1.ClusterUpdating), member("m2", ""), {Cluster: Cluster{Name: "m3"}}},
		status:    withStages(stageStarted("s1", -time.Minute)),
		wantPhase: flotillav1alpha1.RolloutProgressing, wantStage: "s1", wantRequeue: 9 * time.Minute,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec := tc.spec
			spec.Strategy = "three"
			out := Step(Input{Stages: tc.stages, Members: tc.members, Target: newRev, Spec: spec, Status: *tc.status.DeepCopy(), Generation: 2, Now: t0})
			if !slices.Equal(out.Update, tc.wantUpdate) {
				t.Errorf("update %v, want %v", out.Update, tc.wantUpdate)
			}
			if out.Status.Phase != tc.wantPhase || out.Status.CurrentStage != tc.wantStage {
				t.Errorf("phase %s at stage %s, want %s at %s", out.Status.Phase, out.Status.CurrentStage, tc.wantPhase, tc.wantStage)
			}
			var reasons []string
			for _, e := range out.Events {
				reasons = append(reasons, e.Reason)
			}
			if !slices.Equal(reasons, tc.wantEvents) {
				t.Errorf("events %v, want %v", reasons, tc.wantEvents)
			}
			if out.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeue after %s, want %s", out.RequeueAfter, tc.wantRequeue)
			}
			if tc.wantCondition != "" {
				typ, reason, _ := strings.Cut(tc.wantCondition, "=")
				if c := meta.FindStatusCondition(out.Status.Conditions, typ); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
					t.Errorf("condition %s: %+v, want True with reason %s", typ, c, reason)
				}
			}
			if tc.wantMessage != "" && !slices.ContainsFunc(out.Status.Conditions, func(c metav1.Condition) bool { return strings.Contains(c.Message, tc.wantMessage) }) {
				t.Errorf("conditions %+v, want a message with %q", out.Status.Conditions, tc.wantMessage)
			}
			if out.Status.ObservedGeneration != 2 {
				t.Errorf("observedGeneration %d, want 2", out.Status.ObservedGeneration)
			}
			// Every cluster told to update is Updating at the target.
			for _, st := range out.Status.Stages {
				for _, c := range st.Clusters {
					if slices.Contains(out.Update, c.Name) && (c.Health != flotillav1alpha1.ClusterUpdating || c.Revision != newRev || c.UpdateTime == nil) {
						t.Errorf("updated cluster %+v, want Updating at %s with an update time", c, newRev)
					}
				}
			}
		})
	}
}

// A halted stage leaves the later stages' clusters where they are, and a
// step taken again with the same state decides the same (resuming after a
// restart writes nothing twice).
func TestStepIsRepeatable(t *testing.T) {
	t.Parallel()
	in := Input{Stages: []flotillav1alpha1.RolloutStage{stage("s1", "m1"), stage("s2", "m2")},
		Members: []Member{member("m1", ""), member("m2", "")}, Target: newRev, Generation: 1, Now: t0}
	first := Step(in)
	in.Status = first.Status
	in.Members[0] = member("m1", flotillav1alpha1.ClusterUpdating)
	in.Now = t0.Add(time.Second)
	again := Step(in)
	if len(again.Update) != 0 || len(again.Events) != 0 {
		t.Errorf("second step updates %v and records %v, want nothing new", again.Update, again.Events)
	}
	if got := again.Status.Stages[0].StartTime; !got.Equal(first.Status.Stages[0].StartTime) {
		t.Errorf("stage start moved from %v to %v", first.Status.Stages[0].StartTime, got)
	}
}
