package rollout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

// StatusOptions are rollout status's flags.
type StatusOptions struct {
	// Watch follows the run until it is over; otherwise its progress is
	// printed once.
	Watch bool
	// Timeout ends the watch; 0: none.
	Timeout time.Duration
}

// Status prints the progress of the template's active run as it changes,
// as kubectl rollout status does, until the run completed (nil) or
// halted, was aborted or superseded (an error).
func (c *Command) Status(ctx context.Context, o StatusOptions) error {
	run, err := c.activeRun(ctx)
	if err != nil {
		return err
	}
	if run == nil {
		fmt.Fprintf(c.Out, "no rollout was started for %s: it has no RolloutRun (is its policy under a RolloutStrategy?)\n", c.Target.Ref())
		return nil
	}
	if !o.Watch {
		line, _, err := c.Progress(run)
		if line != "" {
			fmt.Fprintln(c.Out, line)
		}
		return err
	}
	ctx, cancel := watchtools.ContextWithOptionalTimeout(ctx, o.Timeout)
	defer cancel()
	runs := c.runs(run.Namespace)
	byName := fields.OneTermEqualSelector("metadata.name", run.Name).String()
	// Through the clientset, the reflector knows whether it may ask for a
	// streaming list (a fake clientset cannot serve one).
	lw := cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			options.FieldSelector = byName
			return runs.List(ctx, options)
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = byName
			return runs.Watch(ctx, options)
		},
	}, c.Flotilla)
	var last string
	_, err = watchtools.UntilWithSync(ctx, lw, &flotillav1alpha1.RolloutRun{}, nil, func(e watch.Event) (bool, error) {
		switch e.Type {
		case watch.Added, watch.Modified:
			run, ok := e.Object.(*flotillav1alpha1.RolloutRun)
			if !ok {
				return false, fmt.Errorf("unexpected object %T", e.Object)
			}
			line, done, err := c.Progress(run)
			if line != "" && line != last {
				fmt.Fprintln(c.Out, line)
				last = line
			}
			return done, err
		case watch.Deleted:
			return false, fmt.Errorf("rolloutrun %q was deleted", run.Name)
		default:
			return false, fmt.Errorf("unexpected watch event %s", e.Type)
		}
	})
	if wait.Interrupted(err) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out waiting for rollout %q to finish", run.Name)
	}
	return err
}

// Progress renders run as one line of rollout status and says whether it
// completed; a run halted, aborted or superseded is an error.
func (c *Command) Progress(run *flotillav1alpha1.RolloutRun) (line string, done bool, err error) {
	s := &run.Status
	waiting := fmt.Sprintf("Waiting for rollout %q to finish: ", run.Name)
	if !s.Phase.Terminal() && s.ObservedGeneration != 0 && s.ObservedGeneration < run.Generation {
		return fmt.Sprintf("Waiting for rollout %q spec update to be observed...", run.Name), false, nil
	}
	stage, where := currentStage(s)
	switch s.Phase {
	case "":
		return fmt.Sprintf("Waiting for rollout %q to start...", run.Name), false, nil
	case flotillav1alpha1.RolloutCompleted:
		return fmt.Sprintf("rollout %q successfully rolled out", run.Name), true, nil
	case flotillav1alpha1.RolloutHalted:
		if s.CurrentStage != "" {
			where = "stage " + s.CurrentStage
		}
		if failed := failedStage(s); failed != "" {
			where = "stage " + failed
		}
		msg := "a stage failed"
		if cond := meta.FindStatusCondition(s.Conditions, flotillav1alpha1.RolloutConditionHalted); cond != nil && cond.Message != "" {
			msg = cond.Message
		}
		return "", false, fmt.Errorf("rollout %q halted at %s: %s", run.Name, where, msg)
	case flotillav1alpha1.RolloutAborted:
		if s.CurrentStage != "" {
			where = "stage " + s.CurrentStage
		}
		return "", false, fmt.Errorf("rollout %q was aborted at %s", run.Name, where)
	case flotillav1alpha1.RolloutSuperseded:
		return "", false, fmt.Errorf("rollout %q was superseded by a newer rollout of %s: %s", run.Name, c.Target.Ref(), c.hint("status"))
	case flotillav1alpha1.RolloutPaused:
		return fmt.Sprintf("%spaused at %s; resume it with: %s", waiting, where, c.hint("resume")), false, nil
	case flotillav1alpha1.RolloutWaitingForApproval:
		if stage == nil || stage.Phase != flotillav1alpha1.StageWaitingApproval {
			if st := waitingForApproval(s); st != nil {
				stage = st
			}
		}
		if stage == nil {
			return fmt.Sprintf("%swaiting for an approval...", waiting), false, nil
		}
		gate := ""
		if stage.WaitingFor != "" {
			gate = " (" + string(stage.WaitingFor) + ")"
		}
		return fmt.Sprintf("Waiting for approval of stage %s%s: %s", stage.Name, gate, c.hint("approve", "--stage", stage.Name)), false, nil
	case flotillav1alpha1.RolloutWaiting:
		if stage == nil {
			return waiting + "waiting...", false, nil
		}
		until := ""
		if stage.WaitUntil != nil {
			until = " until " + stage.WaitUntil.UTC().Format(time.RFC3339)
		}
		if stage.WaitingFor == flotillav1alpha1.GateAfter {
			return fmt.Sprintf("%s%s succeeded; waiting%s before the next stage...", waiting, where, until), false, nil
		}
		return fmt.Sprintf("%s%s waiting%s before it starts...", waiting, where, until), false, nil
	case flotillav1alpha1.RolloutProgressing:
		if stage == nil {
			return waiting + "progressing...", false, nil
		}
		if stage.Phase == flotillav1alpha1.StageSoaking && stage.SoakEnd != nil {
			return fmt.Sprintf("%s%s: soaking until %s...", waiting, where, stage.SoakEnd.UTC().Format(time.RFC3339)), false, nil
		}
		healthy, unhealthy := 0, 0
		for _, cl := range stage.Clusters {
			switch cl.Health {
			case flotillav1alpha1.ClusterHealthy:
				healthy++
			case flotillav1alpha1.ClusterUnhealthy:
				unhealthy++
			}
		}
		line := fmt.Sprintf("%s%s: %d of %d clusters healthy", waiting, where, healthy, len(stage.Clusters))
		if unhealthy > 0 {
			line += fmt.Sprintf(" (%d unhealthy)", unhealthy)
		}
		return line + "...", false, nil
	}
	return fmt.Sprintf("%sphase %s...", waiting, s.Phase), false, nil
}

// currentStage returns the run's current stage and names it "stage canary
// (1 of 3)"; nil if the status does not list it.
func currentStage(s *flotillav1alpha1.RolloutRunStatus) (*flotillav1alpha1.StageStatus, string) {
	for i := range s.Stages {
		if s.Stages[i].Name == s.CurrentStage {
			return &s.Stages[i], fmt.Sprintf("stage %s (%d of %d)", s.CurrentStage, i+1, len(s.Stages))
		}
	}
	if s.CurrentStage == "" {
		return nil, "the first stage"
	}
	return nil, "stage " + s.CurrentStage
}

func failedStage(s *flotillav1alpha1.RolloutRunStatus) string {
	for _, st := range s.Stages {
		if st.Phase == flotillav1alpha1.StageFailed {
			return st.Name
		}
	}
	return ""
}

// waitingForApproval returns the stage waiting for an approval, nil if none.
func waitingForApproval(s *flotillav1alpha1.RolloutRunStatus) *flotillav1alpha1.StageStatus {
	for i := range s.Stages {
		if s.Stages[i].Phase == flotillav1alpha1.StageWaitingApproval {
			return &s.Stages[i]
		}
	}
	return nil
}
