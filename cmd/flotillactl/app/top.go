package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/flotilla-io/flotilla/cli/top"
)

// newTopCommand returns top pod|node: the members' resource usage, each
// member's metrics.k8s.io read through the control plane's proxy
// (karmadactl top).
func newTopCommand(cp *controlPlaneFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Display resource (CPU/memory) usage of member clusters",
		Long: `Display resource (CPU/memory) usage of the pods and nodes of member clusters.

Each member's metrics.k8s.io (its metrics-server) is read through the control
plane's clusters/{name}/proxy as the caller; -C/--clusters names the members
(all of them by default).`,
	}
	cmd.AddCommand(newTopPodCommand(cp, streams, self), newTopNodeCommand(cp, streams, self))
	return cmd
}

func newTopPodCommand(cp *controlPlaneFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	var o top.PodOptions
	var clusters []string
	protobuf := true
	cmd := &cobra.Command{
		Use:     "pod [NAME | -l label]",
		Aliases: []string{"pods", "po"},
		Short:   "Display resource (CPU/memory) usage of pods of member clusters",
		Example: fmt.Sprintf(`  # Show metrics for all pods in the default namespace of every member cluster
  %[1]s top pod

  # Show metrics for all pods in the given namespace of member1 and member2
  %[1]s top pod --namespace=NAMESPACE -C member1,member2

  # Show metrics for a given pod and its containers
  %[1]s top pod POD_NAME --containers

  # Show metrics for the pods defined by label name=myLabel
  %[1]s top pod -l name=myLabel`, self),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return top.RunPods(cmd.Context(), cp.config, protobuf, clusters, o, streams.Out, streams.ErrOut)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVarP(&clusters, "clusters", "C", nil, "The member clusters to read, for example -C member1,member2 (all members by default).")
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	fs.StringVar(&o.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.")
	fs.StringVar(&o.SortBy, "sort-by", "", "If non-empty, sort pods list using specified field. The field can be either 'cpu' or 'memory'.")
	fs.BoolVar(&o.Containers, "containers", false, "If present, print usage of containers within a pod.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	fs.BoolVar(&o.NoHeaders, "no-headers", false, "If present, print output without headers.")
	fs.BoolVar(&protobuf, "use-protocol-buffers", protobuf, "Enables using protocol-buffers to access Metrics API.")
	fs.BoolVar(&o.Sum, "sum", false, "Print the sum of the resource usage.")
	return cmd
}

func newTopNodeCommand(cp *controlPlaneFlags, streams genericiooptions.IOStreams, self string) *cobra.Command {
	var o top.NodeOptions
	var clusters []string
	protobuf := true
	cmd := &cobra.Command{
		Use:     "node [NAME | -l label]",
		Aliases: []string{"nodes", "no"},
		Short:   "Display resource (CPU/memory) usage of nodes of member clusters",
		Example: fmt.Sprintf(`  # Show metrics for all nodes of every member cluster
  %[1]s top node

  # Show metrics for all nodes of member1 and member2
  %[1]s top node --clusters=member1,member2

  # Show metrics for a given node
  %[1]s top node NODE_NAME -C member1`, self),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return top.RunNodes(cmd.Context(), cp.config, protobuf, clusters, o, streams.Out, streams.ErrOut)
		},
	}
	fs := cmd.Flags()
	fs.StringSliceVarP(&clusters, "clusters", "C", nil, "The member clusters to read, for example --clusters=member1,member2 (all members by default).")
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
	fs.StringVar(&o.SortBy, "sort-by", "", "If non-empty, sort nodes list using specified field. The field can be either 'cpu' or 'memory'.")
	fs.BoolVar(&o.NoHeaders, "no-headers", false, "If present, print output without headers.")
	fs.BoolVar(&protobuf, "use-protocol-buffers", protobuf, "Enables using protocol-buffers to access Metrics API.")
	fs.BoolVar(&o.ShowCapacity, "show-capacity", false, "Print node resources based on Capacity instead of Allocatable (default) of the nodes.")
	return cmd
}
