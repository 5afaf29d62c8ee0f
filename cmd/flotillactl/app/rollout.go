package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/rollout"
)

// newRolloutCommand returns rollout (kubectl rollout's verbs) for a
// template rolled out stage by stage under a RolloutStrategy.
func newRolloutCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout SUBCOMMAND",
		Short: "Manage the staged rollout of a resource template",
		Long: `Manage the staged rollout of a resource template whose policy names a
RolloutStrategy (annotation rollout.flotilla.io/strategy).

Each change of the template is rolled out by a RolloutRun, stage by stage;
each propagated content is kept as a numbered ResourceRevision. The verbs
are kubectl rollout's, plus approve for the strategy's approval gates.`,
		Example: fmt.Sprintf(`  # Watch the rollout of deployment nginx
  %[1]s rollout status deployment/nginx -n default

  # Approve the stage waiting for an approval
  %[1]s rollout approve deployment/nginx

  # Roll back to the previous revision
  %[1]s rollout undo deployment/nginx`, self),
	}
	verb := func(use, short, example string, run func(*rollout.Command, context.Context) error) *cobra.Command {
		return &cobra.Command{
			Use:     use + " (TYPE NAME | TYPE/NAME)",
			Short:   short,
			Example: fmt.Sprintf("  %s rollout %s deployment/nginx%s", self, use, example),
			Args:    cobra.RangeArgs(1, 2),
			RunE: func(cmd *cobra.Command, args []string) error {
				c, err := rollout.New(cp.config, self, args, cmd.OutOrStdout())
				if err != nil {
					return err
				}
				return run(c, cmd.Context())
			},
		}
	}

	status := rollout.StatusOptions{Watch: true}
	statusCmd := verb("status", "Show the status of the rollout", "", func(c *rollout.Command, ctx context.Context) error {
		return c.Status(ctx, status)
	})
	statusCmd.Long = `Show the status of the template's active rollout (its newest RolloutRun).

By default it watches the run until it is over: it exits 0 once every stage
succeeded, and non-zero when the run halted (a stage failed), was aborted
or was superseded by a newer change. --watch=false prints the progress once.`
	statusCmd.Flags().BoolVarP(&status.Watch, "watch", "w", status.Watch, "Watch the status of the rollout until it's done.")
	statusCmd.Flags().DurationVar(&status.Timeout, "timeout", 0, "The length of time to wait before ending watch, zero means never. Any other values should contain a corresponding time unit (e.g. 1s, 2m, 3h).")

	var revision int64
	historyCmd := verb("history", "View the revisions of the template", "", func(c *rollout.Command, ctx context.Context) error {
		return c.History(ctx, revision)
	})
	historyCmd.Flags().Int64Var(&revision, "revision", 0, "See the details, including the template, of the revision specified.")

	var approve rollout.ApproveOptions
	var gate string
	approveCmd := verb("approve", "Approve an approval gate of the rollout", " --stage canary", func(c *rollout.Command, ctx context.Context) error {
		return c.Approve(ctx, approve)
	})
	approveCmd.PreRunE = func(*cobra.Command, []string) error {
		approve.Gate = flotillav1alpha1.GatePosition(gate)
		return approve.Validate()
	}
	approveCmd.Long = `Approve an approval gate of the template's active rollout: by default the
gate the stage waiting for an approval is at. --stage and --gate approve a
gate in advance. The approval is recorded in the run's spec.approvals with
the caller's username.`
	approveCmd.Flags().StringVar(&approve.Stage, "stage", "", "The stage to approve (default: the stage waiting for an approval).")
	approveCmd.Flags().StringVar(&gate, "gate", "", fmt.Sprintf("The gate of the stage to approve: %s", strings.Join([]string{string(flotillav1alpha1.GateBefore), string(flotillav1alpha1.GateAfter)}, "|")))

	var toRevision int64
	undoCmd := verb("undo", "Roll the template back to a previous revision", " --to-revision=3", func(c *rollout.Command, ctx context.Context) error {
		return c.Undo(ctx, toRevision)
	})
	undoCmd.Long = `Roll the template back to a previous revision: the revision's content is
written back into the template, and the rollout controller rolls that change
out stage by stage like any other.`
	undoCmd.Flags().Int64Var(&toRevision, "to-revision", 0, "The revision to roll back to. Default to 0 (last revision).")

	cmd.AddCommand(
		statusCmd,
		historyCmd,
		verb("pause", "Pause the rollout", "", (*rollout.Command).Pause),
		verb("resume", "Resume a paused rollout", "", (*rollout.Command).Resume),
		approveCmd,
		verb("abort", "Abort the rollout; clusters keep the revision they run", "", (*rollout.Command).Abort),
		undoCmd,
	)
	return cmd
}
