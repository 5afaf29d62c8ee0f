package app

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/flotilla-io/flotilla/cli/clusterproxy"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/cli/multiget"
)

// newGetCommand returns get: kubectl get over the control plane and the
// member clusters (karmadactl get), members read through
// clusters/{name}/proxy as the caller.
func newGetCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	o := multiget.NewGetOptions(genericiooptions.IOStreams{})
	cmd := &cobra.Command{
		Use:   "get [(-o|--output=)json|yaml|name|wide|...] (TYPE[.VERSION][.GROUP] [NAME | -l label] | TYPE[.VERSION][.GROUP]/NAME ...) [--operation-scope=karmada|members|all] [-C member1,member2]",
		Short: "Display one or many resources in the control plane and member clusters",
		Long: `Display one or many resources in the control plane and member clusters, as
karmadactl get does: kubectl get's output, in one table with a CLUSTER column
(` + multiget.ControlPlaneName + ` for the control plane) and an ADOPTION column (Y for a member object
the control plane propagated, N for one it does not manage, - for control-plane
objects; for pods only with -o wide). With -o wide a DRIFT column follows
(Flotilla's own): Open when the member object differs from what the control
plane applied and was left so, Corrected when it did and was written back,
No when its Work records no drift, - when not known (see flotillactl drift).

--operation-scope says where to read: karmada (the control plane, the
default), members, or all. Members are all member clusters, or those of -C;
-C alone implies --operation-scope=members. Members are read concurrently
through the control plane's clusters/{name}/proxy as you: the member's RBAC
applies and no member credentials are needed. A member that cannot be read
(forbidden, unreachable, no answer within --member-timeout) is named in a
warning on stderr while the others' rows print; the command fails only when
nothing could be read.

With -o json|yaml|name|jsonpath|go-template|custom-columns the objects of all
clusters print as one list; member objects carry the annotation
resource.karmada.io/cached-from-cluster with their cluster.`,
		Example: `  # Deployments of the control plane
  ` + self + ` get deployments

  # Pods of every member cluster, in all namespaces
  ` + self + ` get pods --operation-scope=members -A

  # A Deployment in the control plane and in member1 and member2
  ` + self + ` get deployment nginx --operation-scope=all -C member1,member2

  # Deployments of member1 as YAML, then watch them
  ` + self + ` get deployments -C member1 -o yaml
  ` + self + ` get deployments -C member1 --watch`,
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.IOStreams = commandStreams(cmd)
			o.Selection.ScopeSet = cmd.Flags().Changed(clusterproxy.ScopeFlag)
			return o.Run(cmd.Context(), cp.config, controlplane.ClusterNames(cp.config), args)
		},
	}
	o.PrintFlags.AddFlags(cmd)
	fs := cmd.Flags()
	addSelectionFlags(fs, cp, &o.Selection, "read")
	fs.StringVarP(&o.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'. (e.g. -l key1=value1,key2=value2)")
	alias(fs, "selector", "labels", "", true) // karmadactl's name
	fs.StringVar(&o.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='. The server only supports a limited number of field queries per type.")
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	fs.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "If the requested object does not exist the command will return exit code 0.")
	fs.Int64Var(&o.ChunkSize, "chunk-size", o.ChunkSize, "Return large lists in chunks rather than all at once. Pass 0 to disable.")
	fs.BoolVarP(&o.Watch, "watch", "w", false, "After listing/getting the requested object, watch for changes in every cluster read.")
	fs.BoolVar(&o.WatchOnly, "watch-only", false, "Watch for changes to the requested object(s), without listing/getting first.")
	fs.BoolVar(&o.OutputWatchEvents, "output-watch-events", false, "Output watch event objects when --watch or --watch-only is used. Existing objects are output as initial ADDED events.")
	return cmd
}

// addSelectionFlags adds karmadactl's --operation-scope and -C, and the
// per-cluster deadline.
func addSelectionFlags(fs *pflag.FlagSet, cp *controlPlaneFlags, sel *multiget.Selection, verb string) {
	fs.VarP(&sel.Scope, clusterproxy.ScopeFlag, "s", "Where to "+verb+": karmada (the control plane), members (member clusters) or all (both).")
	fs.StringSliceVarP(&sel.Clusters, "clusters", "C", nil, "The member clusters to "+verb+" (comma-separated, e.g. -C member1,member2); all members when empty. Alone, implies --operation-scope=members.")
	clusterproxy.AddServerFlag(fs, cp.config)
	fs.DurationVar(&sel.Timeout, "member-timeout", sel.Timeout, "How long to wait for each cluster; one that has not answered by then is skipped with a warning. 0 waits as long as it takes.")
}
