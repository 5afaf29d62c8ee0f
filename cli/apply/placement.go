package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/cli-runtime/pkg/resource"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
	"github.com/flotilla-io/flotilla/cli/encoded"
)

// DryRunPlacement is the value of --dry-run that reviews the placement of
// the manifests instead of applying them.
const DryRunPlacement = "placement"

// dryRunFlag is kubectl's --dry-run.
const dryRunFlag = "dry-run"

// placementDryRun tells whether the command line asks --dry-run=placement.
func placementDryRun(cmd *cobra.Command) bool {
	f := cmd.Flags().Lookup(dryRunFlag)
	return f != nil && f.Value.String() == DryRunPlacement
}

// reviewPlacement reads the manifests the command line names, with the
// policies --all-clusters or -C would add, has the control plane review
// their placement (a PlacementReview) and prints the answer.
func (f *Flags) reviewPlacement(ctx context.Context, flags genericclioptions.RESTClientGetter, cmd *cobra.Command) error {
	namespace, explicit, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return fmt.Errorf("failed to get namespace from the kubeconfig: %w", err)
	}
	files := f.Kubectl.DeleteFlags.FileNameFlags.ToOptions()
	if len(files.Filenames) == 0 && files.Kustomize == "" {
		return fmt.Errorf("must specify one of -f and -k")
	}
	infos, err := resource.NewBuilder(flags).Unstructured().ContinueOnError().
		NamespaceParam(namespace).DefaultNamespace().
		FilenameParam(explicit, &files).Flatten().Do().Infos()
	if err != nil {
		return err
	}
	clusters := Clusters(f.Clusters)
	if err := ValidateTargets(f.AllClusters, clusters, nil); err != nil {
		return err
	}
	var objects []runtime.RawExtension
	add := func(obj runtime.Object) error {
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		objects = append(objects, runtime.RawExtension{Raw: b})
		return nil
	}
	for _, i := range infos {
		if err := add(i.Object); err != nil {
			return err
		}
		if f.AllClusters || len(clusters) > 0 {
			p, err := PolicyFor(i.Mapping, i.Namespace, i.Name, clusters)
			if err != nil {
				return err
			}
			if err := add(p); err != nil {
				return err
			}
		}
	}
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	review := &flotillav1alpha1.PlacementReview{Spec: flotillav1alpha1.PlacementReviewSpec{Objects: objects}}
	if f.IgnoreExisting {
		review.Spec.Existing = flotillav1alpha1.ReviewExistingIgnore
	}
	got, err := cp.Karmada.FlotillaV1alpha1().PlacementReviews().Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	output, _ := cmd.Flags().GetString("output")
	return PrintReview(cmd.OutOrStdout(), got, output)
}

// PrintReview writes a review's answer as output says: "" (a table, one
// row per template and cluster), "yaml" or "json" (the PlacementReview).
func PrintReview(w io.Writer, r *flotillav1alpha1.PlacementReview, output string) error {
	if done, err := encoded.Print(w, r.Status, output, ""); done || err != nil {
		return err
	}
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "TEMPLATE\tPOLICY\tRESULT\tCLUSTER\tREPLICAS\tOVERRIDES")
	for _, t := range r.Status.Templates {
		name := strings.ToLower(t.Kind) + "/" + t.Name
		if t.Namespace != "" {
			name = t.Namespace + "/" + name
		}
		if t.Existing {
			name += " (existing)"
		}
		if len(t.Clusters) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t%s\n", name, dash(t.Policy), t.Result, dash(t.Message))
			continue
		}
		for _, c := range t.Clusters {
			replicas := "-"
			if c.Replicas != nil {
				replicas = strconv.Itoa(int(*c.Replicas))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, dash(t.Policy), t.Result, c.Name, replicas, dash(strings.Join(c.Overrides, ", ")))
		}
	}
	if r.Status.Omitted > 0 {
		fmt.Fprintf(tw, "(%d more existing templates the policies would claim are not listed)\n", r.Status.Omitted)
	}
	return tw.Flush()
}

// dash is s, or "-" when s is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
