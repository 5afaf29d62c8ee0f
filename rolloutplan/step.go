package rolloutplan

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// Event reasons of a rollout, recorded on the template and on the run.
const (
	ReasonRolloutStarted     = "RolloutStarted"
	ReasonStageStarted       = "StageStarted"
	ReasonStageSucceeded     = "StageSucceeded"
	ReasonStageFailed        = "StageFailed"
	ReasonWaitingForApproval = "WaitingForApproval"
	ReasonStageApproved      = "StageApproved"
	ReasonRolloutHalted      = "RolloutHalted"
	ReasonRolloutCompleted   = "RolloutCompleted"
	ReasonRolloutPaused      = "RolloutPaused"
	ReasonRolloutResumed     = "RolloutResumed"
	ReasonRolloutAborted     = "RolloutAborted"
	ReasonClustersInNoStage  = "ClustersInNoStage"
)

// defaultProgressDeadline applies to a stage stored without one.
const defaultProgressDeadline = 10 * time.Minute

// Member is a cluster of the placement and how it does with the run's
// revision.
type Member struct {
	Cluster
	// Revision is the hash of the revision the cluster is told to run; ""
	// when the binding does not say (it then gets the template as it is).
	Revision string
	// Health is how the cluster does with the target revision when it runs
	// it: Updating, Healthy or Unhealthy (a cluster that is down is
	// Unhealthy). Ignored for a cluster on another revision.
	Health flotillav1alpha1.ClusterHealth
	// Reason says why a cluster is not healthy.
	Reason string
}

// Input is the state a step decides from.
type Input struct {
	// Stages are the stages of the run's strategy, defaults applied.
	Stages []flotillav1alpha1.RolloutStage
	// Members are the clusters of the placement.
	Members []Member
	// Target is the hash of the revision the run rolls out.
	Target string
	// Spec is the run's spec; Status its status as last written.
	Spec   flotillav1alpha1.RolloutRunSpec
	Status flotillav1alpha1.RolloutRunStatus
	// Generation is the run's generation.
	Generation int64
	Now        time.Time
}

// Event is an event to record on the template and the run.
type Event struct {
	Type, Reason, Message string
}

// Output is what a step decided.
type Output struct {
	// Status is the run's new status.
	Status flotillav1alpha1.RolloutRunStatus
	// Update are the clusters to tell to run the target revision now.
	Update []string
	// RequeueAfter is when the run should be looked at again for a timer
	// (a soak, a wait gate, a deadline); 0 when no timer runs.
	RequeueAfter time.Duration
	Events       []Event
}

// Step takes a run one step: it updates the clusters the current stage may
// update, moves to the next stage when the current one has soaked and its
// gates passed, and halts when a stage stays unhealthy past its deadline.
// A stage whose clusters all succeed at once lets the next one start in the
// same step, so a rollout without soak or gates takes one write per stage.
func Step(in Input) Output {
	s := &stepper{in: in, now: metav1.NewTime(in.Now)}
	s.st = *in.Status.DeepCopy()
	s.run()
	s.st.ObservedGeneration = in.Generation
	return Output{Status: s.st, Update: s.update, RequeueAfter: s.requeue, Events: s.events}
}

type stepper struct {
	in      Input
	now     metav1.Time
	st      flotillav1alpha1.RolloutRunStatus
	update  []string
	requeue time.Duration
	events  []Event
	// at tells the clusters told to run the target, updates of this step
	// included.
	at map[string]bool
	// reasons are why the members are not healthy, by name.
	reasons map[string]string
}

func (s *stepper) event(typ, reason, format string, args ...any) {
	s.events = append(s.events, Event{Type: typ, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// after asks for a look again at t.
func (s *stepper) after(t time.Time) {
	d := max(t.Sub(s.in.Now), time.Second)
	if s.requeue == 0 || d < s.requeue {
		s.requeue = d
	}
}

func (s *stepper) run() {
	if s.st.Phase.Terminal() {
		return
	}
	if s.st.StartTime == nil {
		s.st.StartTime = &s.now
		s.event(corev1.EventTypeNormal, ReasonRolloutStarted, "Rollout of revision %s started by strategy %s", s.in.Target, s.in.Spec.Strategy)
		s.condition(flotillav1alpha1.RolloutConditionHalted, false, "NotHalted", "")
		s.condition(flotillav1alpha1.RolloutConditionCompleted, false, "InProgress", "")
		s.condition(flotillav1alpha1.RolloutConditionWaitingForApproval, false, "NotWaiting", "")
	}
	s.at = map[string]bool{}
	s.reasons = map[string]string{}
	for _, m := range s.in.Members {
		s.reasons[m.Name] = m.Reason
		if m.Revision == "" || m.Revision == s.in.Target {
			s.at[m.Name] = true
		}
	}
	clusters := make([]Cluster, len(s.in.Members))
	for i, m := range s.in.Members {
		clusters[i] = m.Cluster
	}
	assigned, unstaged := Assign(s.in.Stages, clusters)
	s.layout(assigned)
	if s.in.Spec.Abort {
		s.finish(flotillav1alpha1.RolloutAborted)
		s.condition(flotillav1alpha1.RolloutConditionProgressing, false, "Aborted", "The rollout was aborted at stage "+s.st.CurrentStage)
		s.event(corev1.EventTypeWarning, ReasonRolloutAborted, "Rollout aborted at stage %s", s.st.CurrentStage)
		return
	}
	if len(unstaged) > 0 {
		msg := fmt.Sprintf("Clusters %s of the placement are in no stage of strategy %s: nothing is rolled out until the strategy holds them", strings.Join(unstaged, ", "), s.in.Spec.Strategy)
		if c := meta.FindStatusCondition(s.st.Conditions, flotillav1alpha1.RolloutConditionProgressing); c == nil || c.Reason != ReasonClustersInNoStage || c.Message != msg {
			s.event(corev1.EventTypeWarning, ReasonClustersInNoStage, "%s", msg)
		}
		s.st.Phase = flotillav1alpha1.RolloutWaiting
		s.condition(flotillav1alpha1.RolloutConditionProgressing, false, ReasonClustersInNoStage, msg)
		return
	}
	if s.in.Spec.Paused {
		if s.st.Phase != flotillav1alpha1.RolloutPaused {
			s.event(corev1.EventTypeNormal, ReasonRolloutPaused, "Rollout paused at stage %s", s.st.CurrentStage)
		}
		s.st.Phase = flotillav1alpha1.RolloutPaused
		s.condition(flotillav1alpha1.RolloutConditionProgressing, false, "Paused", "The rollout is paused at stage "+s.st.CurrentStage)
		return
	}
	if s.st.Phase == flotillav1alpha1.RolloutPaused {
		s.event(corev1.EventTypeNormal, ReasonRolloutResumed, "Rollout resumed at stage %s", s.st.CurrentStage)
	}
	for i := range s.st.Stages {
		if s.st.Stages[i].Phase == flotillav1alpha1.StageSucceeded {
			continue
		}
		s.st.CurrentStage = s.st.Stages[i].Name
		if !s.stage(i) {
			return
		}
	}
	s.finish(flotillav1alpha1.RolloutCompleted)
	s.condition(flotillav1alpha1.RolloutConditionProgressing, false, "Completed", "Every stage succeeded")
	s.condition(flotillav1alpha1.RolloutConditionCompleted, true, "Completed", "Revision "+s.in.Target+" runs in every stage")
	s.event(corev1.EventTypeNormal, ReasonRolloutCompleted, "Rollout of revision %s completed", s.in.Target)
}

// layout sets the stages of the status from the strategy and the clusters
// assigned to them, keeping what the stored status knew of each by name.
func (s *stepper) layout(assigned [][]Cluster) {
	prev := map[string]flotillav1alpha1.StageStatus{}
	for _, st := range s.st.Stages {
		prev[st.Name] = st
	}
	stages := make([]flotillav1alpha1.StageStatus, len(s.in.Stages))
	health := map[string]Member{}
	for _, m := range s.in.Members {
		health[m.Name] = m
	}
	for i, st := range s.in.Stages {
		out := prev[st.Name]
		out.Name = st.Name
		if out.Phase == "" {
			out.Phase = flotillav1alpha1.StagePending
		}
		updated := map[string]*metav1.Time{}
		for _, c := range out.Clusters {
			updated[c.Name] = c.UpdateTime
		}
		out.Clusters = make([]flotillav1alpha1.ClusterRolloutStatus, 0, len(assigned[i]))
		for _, c := range assigned[i] {
			out.Clusters = append(out.Clusters, s.clusterStatus(health[c.Name], updated[c.Name]))
		}
		stages[i] = out
	}
	s.st.Stages = stages
	if s.st.CurrentStage == "" && len(stages) > 0 {
		s.st.CurrentStage = stages[0].Name
	}
}

func (s *stepper) clusterStatus(m Member, updated *metav1.Time) flotillav1alpha1.ClusterRolloutStatus {
	cs := flotillav1alpha1.ClusterRolloutStatus{Name: m.Name, Revision: m.Revision, UpdateTime: updated}
	switch {
	case !s.at[m.Name]:
		cs.Health = flotillav1alpha1.ClusterPending
	case m.Health == flotillav1alpha1.ClusterHealthy:
		cs.Health = m.Health
	case m.Health == flotillav1alpha1.ClusterUnhealthy:
		cs.Health, cs.Reason = m.Health, m.Reason
	default:
		// Why an updating cluster is not healthy yet moves through
		// several steps (applied, status collected, replicas ready); the
		// status keeps it only once the stage fails (describe), so
		// that the run is not written at each.
		cs.Health = flotillav1alpha1.ClusterUpdating
	}
	if s.at[m.Name] {
		cs.Revision = s.in.Target
	}
	return cs
}

// stage takes stage i as far as it goes now; it says whether the stage is
// done (succeeded and its After gates passed).
func (s *stepper) stage(i int) bool {
	st, spec := &s.st.Stages[i], &s.in.Stages[i]
	if st.StartTime == nil {
		if !s.gates(st, spec.Before, flotillav1alpha1.GateBefore) {
			return false
		}
		st.StartTime = &s.now
		st.Phase = flotillav1alpha1.StageProgressing
		s.event(corev1.EventTypeNormal, ReasonStageStarted, "Stage %s started: %d clusters (%s)", st.Name, len(st.Clusters), clusterNames(st.Clusters))
	}
	if st.Phase == flotillav1alpha1.StageProgressing || st.Phase == flotillav1alpha1.StageSoaking {
		if !s.progress(st, spec) {
			return false
		}
	}
	// The stage succeeded; its After gates hold the next one.
	if !s.gates(st, spec.After, flotillav1alpha1.GateAfter) {
		return false
	}
	st.Phase = flotillav1alpha1.StageSucceeded
	st.CompletionTime = &s.now
	s.event(corev1.EventTypeNormal, ReasonStageSucceeded, "Stage %s succeeded", st.Name)
	return true
}

// progress updates the clusters of a started stage as its concurrency
// allows and judges its health; it says whether the stage succeeded (and
// soaked).
func (s *stepper) progress(st *flotillav1alpha1.StageStatus, spec *flotillav1alpha1.RolloutStage) bool {
	limit := concurrency(spec.MaxConcurrency, len(st.Clusters))
	inflight := 0
	for _, c := range st.Clusters {
		if c.Health == flotillav1alpha1.ClusterUpdating || c.Health == flotillav1alpha1.ClusterUnhealthy {
			inflight++
		}
	}
	for j := range st.Clusters {
		c := &st.Clusters[j]
		if c.Health != flotillav1alpha1.ClusterPending || inflight >= limit {
			continue
		}
		s.update = append(s.update, c.Name)
		s.at[c.Name] = true
		c.Health, c.Reason, c.Revision, c.UpdateTime = flotillav1alpha1.ClusterUpdating, "", s.in.Target, &s.now
		inflight++
	}
	var failing []string
	pending := false
	for _, c := range st.Clusters {
		switch c.Health {
		case flotillav1alpha1.ClusterHealthy:
		case flotillav1alpha1.ClusterPending:
			pending = true
		default:
			failing = append(failing, describe(c, s.reasons[c.Name]))
		}
	}
	maxFailures := 0
	if spec.MaxFailures != nil {
		maxFailures = int(*spec.MaxFailures)
	}
	if !pending && len(failing) <= maxFailures {
		if st.HealthySince == nil {
			st.HealthySince = &s.now
			soak := time.Duration(0)
			if spec.SoakTime != nil && len(st.Clusters) > 0 {
				soak = spec.SoakTime.Duration
			}
			end := metav1.NewTime(s.in.Now.Add(soak))
			st.SoakEnd = &end
		}
		if s.in.Now.Before(st.SoakEnd.Time) {
			st.Phase = flotillav1alpha1.StageSoaking
			s.st.Phase = flotillav1alpha1.RolloutProgressing
			s.condition(flotillav1alpha1.RolloutConditionProgressing, true, "Soaking",
				fmt.Sprintf("Stage %s is healthy and soaks until %s", st.Name, st.SoakEnd.UTC().Format(time.RFC3339)))
			s.after(st.SoakEnd.Time)
			return false
		}
		return true
	}
	// Not healthy (yet): the soak starts again once it is.
	st.HealthySince, st.SoakEnd = nil, nil
	st.Phase = flotillav1alpha1.StageProgressing
	deadline := defaultProgressDeadline
	if spec.ProgressDeadline != nil {
		deadline = spec.ProgressDeadline.Duration
	}
	// The deadline counts from the stage's start or its latest update,
	// whichever is later: a stage updating a cluster at a time gets the
	// whole deadline for each.
	from := st.StartTime.Time
	for _, c := range st.Clusters {
		if c.UpdateTime != nil && c.UpdateTime.After(from) {
			from = c.UpdateTime.Time
		}
	}
	end := from.Add(deadline)
	if len(failing) > maxFailures && !s.in.Now.Before(end) {
		st.Phase = flotillav1alpha1.StageFailed
		st.CompletionTime = &s.now
		msg := fmt.Sprintf("Stage %s failed: %s not healthy %s after it started (maxFailures %d)", st.Name, strings.Join(failing, ", "), deadline, maxFailures)
		s.finish(flotillav1alpha1.RolloutHalted)
		s.condition(flotillav1alpha1.RolloutConditionProgressing, false, "Halted", msg)
		s.condition(flotillav1alpha1.RolloutConditionHalted, true, ReasonStageFailed, msg)
		s.event(corev1.EventTypeWarning, ReasonStageFailed, "%s", msg)
		s.event(corev1.EventTypeWarning, ReasonRolloutHalted, "Rollout of revision %s halted at stage %s; later stages keep their revision", s.in.Target, st.Name)
		return false
	}
	s.st.Phase = flotillav1alpha1.RolloutProgressing
	healthy := 0
	for _, c := range st.Clusters {
		if c.Health == flotillav1alpha1.ClusterHealthy {
			healthy++
		}
	}
	s.condition(flotillav1alpha1.RolloutConditionProgressing, true, "StageProgressing",
		fmt.Sprintf("Stage %s: %d of %d clusters healthy", st.Name, healthy, len(st.Clusters)))
	s.after(end)
	return false
}

// gates says whether the gates at pos of a stage passed, and otherwise
// sets the stage and the run waiting.
func (s *stepper) gates(st *flotillav1alpha1.StageStatus, gates []flotillav1alpha1.RolloutGate, pos flotillav1alpha1.GatePosition) bool {
	if len(gates) == 0 {
		return true
	}
	var wait time.Duration
	approval := false
	for _, g := range gates {
		switch g.Type {
		case flotillav1alpha1.GateWait:
			if g.Duration != nil {
				wait += g.Duration.Duration
			}
		case flotillav1alpha1.GateApproval:
			approval = true
		}
	}
	if st.WaitingFor != pos {
		// Arriving at the gates: the waits start now.
		st.WaitingFor, st.WaitUntil = pos, nil
		if wait > 0 {
			until := metav1.NewTime(s.in.Now.Add(wait))
			st.WaitUntil = &until
		}
	}
	approved := !approval || slices.ContainsFunc(s.in.Spec.Approvals, func(a flotillav1alpha1.RolloutApproval) bool {
		return a.Stage == st.Name && a.Gate == pos
	})
	waited := st.WaitUntil == nil || !s.in.Now.Before(st.WaitUntil.Time)
	if approved && waited {
		if approval {
			s.event(corev1.EventTypeNormal, ReasonStageApproved, "Stage %s approved (%s)", st.Name, pos)
		}
		st.WaitingFor, st.WaitUntil = "", nil
		s.condition(flotillav1alpha1.RolloutConditionWaitingForApproval, false, "Approved", "")
		return true
	}
	if !approved {
		if st.Phase != flotillav1alpha1.StageWaitingApproval {
			s.event(corev1.EventTypeNormal, ReasonWaitingForApproval, "Stage %s waits for approval (%s)", st.Name, pos)
		}
		st.Phase = flotillav1alpha1.StageWaitingApproval
		s.st.Phase = flotillav1alpha1.RolloutWaitingForApproval
		msg := fmt.Sprintf("Stage %s waits for approval (%s)", st.Name, pos)
		s.condition(flotillav1alpha1.RolloutConditionWaitingForApproval, true, "WaitingForApproval", msg)
		s.condition(flotillav1alpha1.RolloutConditionProgressing, false, "WaitingForApproval", msg)
	} else {
		st.Phase = flotillav1alpha1.StageWaiting
		s.st.Phase = flotillav1alpha1.RolloutWaiting
		s.condition(flotillav1alpha1.RolloutConditionProgressing, true, "Waiting",
			fmt.Sprintf("Stage %s waits until %s (%s)", st.Name, st.WaitUntil.UTC().Format(time.RFC3339), pos))
	}
	if st.WaitUntil != nil && s.in.Now.Before(st.WaitUntil.Time) {
		s.after(st.WaitUntil.Time)
	}
	return false
}

// finish ends the run in a terminal phase.
func (s *stepper) finish(phase flotillav1alpha1.RolloutPhase) {
	s.st.Phase = phase
	s.st.CompletionTime = &s.now
	s.condition(flotillav1alpha1.RolloutConditionWaitingForApproval, false, string(phase), "")
}

// condition sets a condition, its transition time now when it changes.
func (s *stepper) condition(typ string, status bool, reason, message string) {
	c := metav1.Condition{Type: typ, Status: metav1.ConditionFalse, Reason: reason, Message: message, ObservedGeneration: s.in.Generation, LastTransitionTime: s.now}
	if status {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&s.st.Conditions, c)
}

// describe names a cluster that is not healthy, with why (reason, the
// member's latest).
func describe(c flotillav1alpha1.ClusterRolloutStatus, reason string) string {
	if reason == "" {
		return fmt.Sprintf("%s (%s)", c.Name, c.Health)
	}
	return fmt.Sprintf("%s (%s: %s)", c.Name, c.Health, reason)
}

func clusterNames(cs []flotillav1alpha1.ClusterRolloutStatus) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}
