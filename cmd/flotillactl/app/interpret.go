package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/interpret"
)

// newInterpretCommand returns interpret: a ResourceInterpreterCustomization
// run locally (karmadactl interpret).
func newInterpretCommand(self string) *cobra.Command {
	o := interpret.NewOptions()
	cmd := &cobra.Command{
		Use:   "interpret --customization=FILE --operation=OPERATION --desired-file=FILE [--observed-file=FILE] [--status-file=FILE] [--desired-replica=N] [-o yaml|json]",
		Short: "Run a ResourceInterpreterCustomization locally, without a control plane",
		Long: `Run one operation of a ResourceInterpreterCustomization (config.karmada.io/v1alpha1)
on objects read from files, as the control plane would, and print the result.
Nothing is read from or written to a cluster.

The customization file may hold several customizations (YAML documents); they
are checked as admission checks them and compiled, and the one that targets
the object's apiVersion and kind must define the operation. Every file is
YAML or JSON.

Operations (case-insensitive), the Lua function each calls and what it prints:
  * InterpretReplica     GetReplicas(desired): replicas and requires (the ReplicaRequirements)
  * InterpretComponent   GetComponents(desired): the list of components
  * ReviseReplica        ReviseReplica(desired, --desired-replica): the revised object
  * Retain               Retain(desired, observed): the object to apply; needs --observed-file
  * AggregateStatus      AggregateStatus(desired, items): the object with its status; the items
                         are the AggregatedStatusItems ({clusterName, status, applied, health})
                         of --status-file, a list or one item per document
  * InterpretStatus      ReflectStatus(observed): the status reported to the control plane
  * InterpretHealth      InterpretHealth(observed): healthy: true|false
  * InterpretDependency  GetDependencies(desired): the list of dependencies

InterpretStatus and InterpretHealth interpret the observed object, or the
desired one when --observed-file is not given.`,
		Example: fmt.Sprintf(`  # Replicas and per-replica requirements of a workload
  %[1]s interpret --customization=customization.yaml --operation=InterpretReplica --desired-file=workload.yaml

  # Set the replicas of a workload to 5, as JSON
  %[1]s interpret --customization=customization.yaml --operation=ReviseReplica --desired-file=workload.yaml --desired-replica=5 -o json

  # Keep the member-owned fields of the object observed in a member cluster
  %[1]s interpret --customization=customization.yaml --operation=Retain --desired-file=workload.yaml --observed-file=observed.yaml

  # Aggregate the statuses reported by the member clusters
  %[1]s interpret --customization=customization.yaml --operation=AggregateStatus --desired-file=workload.yaml --status-file=status.yaml`, self),
		Args:                  cobra.NoArgs,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			o.ReplicaSet, o.Blocks, o.Edit = fs.Changed("desired-replica"), !fs.Changed("output"), fs.Changed("edit")
			return o.Run(cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.Customization, "customization", o.Customization, "File holding the ResourceInterpreterCustomization(s) to run.")
	fs.StringVar(&o.Operation, "operation", o.Operation, "Operation to run: "+interpret.Operations(", ")+".")
	fs.StringVar(&o.DesiredFile, "desired-file", o.DesiredFile, "File holding the desired object (the resource template).")
	fs.StringVar(&o.ObservedFile, "observed-file", o.ObservedFile, "File holding the object observed in a member cluster.")
	fs.StringVar(&o.StatusFile, "status-file", o.StatusFile, "File holding the AggregatedStatusItems for AggregateStatus.")
	fs.Int32Var(&o.DesiredReplica, "desired-replica", o.DesiredReplica, "Replicas for ReviseReplica.")
	fs.StringVarP(&o.Output, "output", "o", o.Output, "Output format: yaml or json, one document; without it, karmadactl's blocks, one per result (\"---\", \"# [i/n] name:\", YAML).")
	fs.BoolVar(&o.Check, "check", o.Check, "Validate and compile the customization(s) of -f and print, for each, every rule: PASS, UNSET or ERROR (karmadactl's report); exit 1 if one fails.")
	fs.BoolVar(&o.ShowDoc, "show-doc", o.ShowDoc, "Print what each rule's Lua function takes and returns.")
	// karmadactl's name of the customization file.
	alias(fs, "customization", "filename", "f", false)
	fs.Bool("edit", false, "karmadactl's editor of customizations: not offered; edit the file and run --check.")
	_ = fs.MarkHidden("edit")
	return cmd
}
