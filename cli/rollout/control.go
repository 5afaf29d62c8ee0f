package rollout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// Pause holds the template's active run where it is (spec.paused).
func (c *Command) Pause(ctx context.Context) error {
	return c.setSpec(ctx, "paused", func(s *flotillav1alpha1.RolloutRunSpec) bool { return s.Paused }, map[string]any{"paused": true})
}

// Resume lets the template's active run move on again.
func (c *Command) Resume(ctx context.Context) error {
	return c.setSpec(ctx, "resumed", func(s *flotillav1alpha1.RolloutRunSpec) bool { return !s.Paused }, map[string]any{"paused": false})
}

// Abort stops the template's active run for good (spec.abort); clusters
// keep the revision they run.
func (c *Command) Abort(ctx context.Context) error {
	return c.setSpec(ctx, "aborted", func(s *flotillav1alpha1.RolloutRunSpec) bool { return s.Abort }, map[string]any{"abort": true})
}

// setSpec merge-patches spec on the active run unless already says it
// is set, and prints `rolloutrun "<name>" <done>`.
func (c *Command) setSpec(ctx context.Context, done string, already func(*flotillav1alpha1.RolloutRunSpec) bool, spec map[string]any) error {
	run, err := c.liveRun(ctx)
	if err != nil {
		return err
	}
	if already(&run.Spec) {
		fmt.Fprintf(c.Out, "rolloutrun %q already %s\n", run.Name, done)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	if _, err := c.runs(run.Namespace).Patch(ctx, run.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controlplane.UserAgent}); err != nil {
		return fmt.Errorf("patching rolloutrun %q: %w", run.Name, err)
	}
	fmt.Fprintf(c.Out, "rolloutrun %q %s\n", run.Name, done)
	return nil
}

// liveRun is the active run, an error if there is none or it is over.
func (c *Command) liveRun(ctx context.Context) (*flotillav1alpha1.RolloutRun, error) {
	run, err := c.mustActiveRun(ctx)
	if err != nil {
		return nil, err
	}
	if run.Status.Phase.Terminal() {
		return nil, fmt.Errorf("rolloutrun %q is over (%s): there is nothing to change; a new template change starts a new rollout", run.Name, run.Status.Phase)
	}
	return run, nil
}

// ApproveOptions are rollout approve's flags.
type ApproveOptions struct {
	// Stage is the stage approved; empty: the one waiting for an approval.
	Stage string
	// Gate is the gate approved (Before, After); empty: the one the stage
	// waits at.
	Gate flotillav1alpha1.GatePosition
}

// Validate checks the gate.
func (o ApproveOptions) Validate() error {
	switch o.Gate {
	case "", flotillav1alpha1.GateBefore, flotillav1alpha1.GateAfter:
		return nil
	}
	return fmt.Errorf("--gate must be %s or %s, not %q", flotillav1alpha1.GateBefore, flotillav1alpha1.GateAfter, o.Gate)
}

// Approve passes an approval gate of the active run: it appends the
// approval to spec.approvals with a patch that carries the run's
// resourceVersion, so that two people approving at once do not lose each
// other's approval (the second is retried on the newer run).
func (c *Command) Approve(ctx context.Context, o ApproveOptions) error {
	if err := o.Validate(); err != nil {
		return err
	}
	approver := c.whoAmI(ctx)
	var msg string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		run, err := c.liveRun(ctx)
		if err != nil {
			return err
		}
		approval, err := ChooseApproval(run, o)
		if err != nil {
			return err
		}
		if o.Gate != "" {
			// Approving in advance: the strategy must have that gate, or
			// the approval would pass nothing.
			if err := c.checkGate(ctx, run.Spec.Strategy, approval); err != nil {
				return err
			}
		}
		what := fmt.Sprintf("stage %s (%s)", approval.Stage, approval.Gate)
		if Approved(run, approval.Stage, approval.Gate) {
			msg = fmt.Sprintf("rolloutrun %q: %s already approved", run.Name, what)
			return nil
		}
		approval.Approver, approval.Time = approver, &metav1.Time{Time: c.now()}
		patch, err := ApprovalPatch(run, approval)
		if err != nil {
			return err
		}
		if _, err := c.runs(run.Namespace).Patch(ctx, run.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: controlplane.UserAgent}); err != nil {
			return err
		}
		msg = fmt.Sprintf("rolloutrun %q approved: %s", run.Name, what)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(c.Out, msg)
	return nil
}

// ChooseApproval returns the approval o asks of run: the stage named (by
// default the one waiting for an approval) and the gate named (by default
// the one the stage waits at).
func ChooseApproval(run *flotillav1alpha1.RolloutRun, o ApproveOptions) (flotillav1alpha1.RolloutApproval, error) {
	stages := run.Status.Stages
	var stage *flotillav1alpha1.StageStatus
	if o.Stage == "" {
		stage = waitingForApproval(&run.Status)
		if stage == nil {
			return flotillav1alpha1.RolloutApproval{}, fmt.Errorf("rolloutrun %q is not waiting for an approval (phase %s); to approve a gate in advance, name it with --stage and --gate", run.Name, phaseOf(run))
		}
	} else {
		i := slices.IndexFunc(stages, func(s flotillav1alpha1.StageStatus) bool { return s.Name == o.Stage })
		switch {
		case i >= 0:
			stage = &stages[i]
		case len(stages) > 0:
			names := make([]string, len(stages))
			for i := range stages {
				names[i] = stages[i].Name
			}
			return flotillav1alpha1.RolloutApproval{}, fmt.Errorf("rolloutrun %q has no stage %q (its stages: %s)", run.Name, o.Stage, strings.Join(names, ", "))
		}
	}
	gate := o.Gate
	if gate == "" {
		if stage == nil || stage.Phase != flotillav1alpha1.StageWaitingApproval || stage.WaitingFor == "" {
			return flotillav1alpha1.RolloutApproval{}, fmt.Errorf("stage %s of rolloutrun %q is not waiting for an approval; to approve it in advance, say which gate with --gate %s|%s", o.Stage, run.Name, flotillav1alpha1.GateBefore, flotillav1alpha1.GateAfter)
		}
		gate = stage.WaitingFor
	}
	name := o.Stage
	if stage != nil {
		name = stage.Name
	}
	return flotillav1alpha1.RolloutApproval{Stage: name, Gate: gate}, nil
}

// checkGate says why approval passes no gate of strategy: the stage has no
// Approval gate at that position. A strategy the caller may not read is
// not checked.
func (c *Command) checkGate(ctx context.Context, strategy string, approval flotillav1alpha1.RolloutApproval) error {
	s, err := c.Flotilla.FlotillaV1alpha1().RolloutStrategies().Get(ctx, strategy, metav1.GetOptions{})
	if apierrors.IsForbidden(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("reading RolloutStrategy %s: %w", strategy, err)
	}
	for _, st := range s.Spec.Stages {
		if st.Name != approval.Stage {
			continue
		}
		gates := st.Before
		if approval.Gate == flotillav1alpha1.GateAfter {
			gates = st.After
		}
		if slices.ContainsFunc(gates, func(g flotillav1alpha1.RolloutGate) bool { return g.Type == flotillav1alpha1.GateApproval }) {
			return nil
		}
		return fmt.Errorf("stage %s of RolloutStrategy %s has no Approval gate %s: there is nothing to approve", approval.Stage, strategy, approval.Gate)
	}
	return fmt.Errorf("RolloutStrategy %s has no stage %s", strategy, approval.Stage)
}

func phaseOf(run *flotillav1alpha1.RolloutRun) string {
	if run.Status.Phase == "" {
		return "not started"
	}
	return string(run.Status.Phase)
}

// Approved says whether run's spec already approves that gate of stage.
func Approved(run *flotillav1alpha1.RolloutRun, stage string, gate flotillav1alpha1.GatePosition) bool {
	return slices.ContainsFunc(run.Spec.Approvals, func(a flotillav1alpha1.RolloutApproval) bool {
		return a.Stage == stage && a.Gate == gate
	})
}

// ApprovalPatch is the merge patch that appends a to run's approvals,
// applied only to the run's resourceVersion (a conflict otherwise).
func ApprovalPatch(run *flotillav1alpha1.RolloutRun, a flotillav1alpha1.RolloutApproval) ([]byte, error) {
	approvals := append(slices.Clone(run.Spec.Approvals), a)
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": run.ResourceVersion},
		"spec":     map[string]any{"approvals": approvals},
	})
}

// whoAmI is the caller's username as the control plane authenticates it,
// empty if it does not say.
func (c *Command) whoAmI(ctx context.Context) string {
	if c.Reviews == nil {
		return ""
	}
	review, err := c.Reviews.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return ""
	}
	return review.Status.UserInfo.Username
}
