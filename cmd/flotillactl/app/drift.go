package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned"
	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/drifted"
)

// newDriftCommand returns drift: the member objects whose Works record a
// drift, across clusters.
func newDriftCommand(cp *controlPlaneFlags, self string) *cobra.Command {
	var (
		f      drifted.Filter
		output string
	)
	cmd := &cobra.Command{
		Use:   "drift [-A] [-C member1,member2] [-o wide|yaml|json]",
		Short: "List the member objects that drifted from what was applied",
		Long: `List the member objects that someone changed, in a member cluster, in the
fields Flotilla applied: the drift each member's Work records
(status.manifestStatuses[].drift), with its cluster, the paths and, with
-o wide, yaml or json, the value in the member and the value applied.

STATE is Corrected when the applied values were written back (the apply
mode Correct, Karmada's behaviour: the entry is the last drift found) and
Open while the member object still differs (the apply modes ReportOnly and
IfNotDrifted leave it, or writing back failed). AGE is since the drift was
found. The Works are read on the control plane as you.`,
		Example: fmt.Sprintf(`  # Drifted objects in the current namespace, in every member
  %[1]s drift

  # In every namespace, in member2 only, with both values of each field
  %[1]s drift -A -C member2 -o yaml`, self),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.AllNamespaces {
				ns, _, err := cp.config.ToRawKubeConfigLoader().Namespace()
				if err != nil {
					return err
				}
				f.Namespace = ns
			}
			cfg, err := cp.config.ToRESTConfig()
			if err != nil {
				return err
			}
			client, err := versioned.NewForConfig(cfg)
			if err != nil {
				return err
			}
			list := func(namespace string) drifted.ListFunc {
				return func(ctx context.Context, opts metav1.ListOptions) (*workv1alpha1.WorkList, error) {
					return client.WorkV1alpha1().Works(namespace).List(ctx, opts)
				}
			}
			entries, err := drifted.Collect(cmd.Context(), list, f)
			if err != nil {
				return err
			}
			if len(entries) == 0 && (output == "" || output == "wide") {
				where := "in " + f.Namespace + " namespace"
				if f.AllNamespaces {
					where = "in any namespace"
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "No drifted objects found %s.\n", where)
				return nil
			}
			return drifted.Print(cmd.OutOrStdout(), entries, output, f.AllNamespaces, time.Now())
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "List drifted objects of every namespace, and cluster-scoped ones.")
	fs.StringSliceVarP(&f.Clusters, "clusters", "C", nil, "The member clusters to list (comma-separated); all when empty.")
	fs.StringVarP(&output, "output", "o", "", "Output format: wide (both values of each field), yaml or json.")
	return cmd
}
