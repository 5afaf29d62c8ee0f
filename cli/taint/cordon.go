package taint

import (
	"context"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	clusterclient "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// Cordon adds (cordon) or removes (uncordon) the unschedulable taint of
// the Cluster name on the control plane flags locates, reporting on out.
func Cordon(ctx context.Context, flags genericclioptions.RESTClientGetter, name string, cordon, dryRun bool, out io.Writer) error {
	if msgs := clustervalidation.ValidateClusterName(name, false); len(msgs) > 0 {
		return fmt.Errorf("invalid cluster name %q: %s", name, strings.Join(msgs, "; "))
	}
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	return runCordon(ctx, cp.Karmada.ClusterV1alpha1().Clusters(), name, cordon, dryRun, out)
}

// runCordon adds (cordon) or removes the unschedulable taint, reporting
// "cordoned", "uncordoned" or "already ..." as kubectl does for nodes.
func runCordon(ctx context.Context, clusters clusterclient.ClusterInterface, name string, cordon, dryRun bool, out io.Writer) error {
	verb := "cordoned"
	if !cordon {
		verb = "uncordoned"
	}
	taint := unschedulableTaint()
	op, err := updateTaints(ctx, clusters, name, dryRun, func(old []corev1.Taint) ([]corev1.Taint, string, error) {
		has := indexTaint(old, taint.Key, taint.Effect) >= 0
		switch {
		case has == cordon:
			return old, "already " + verb, nil
		case cordon:
			return append(append([]corev1.Taint{}, old...), taint), verb, nil
		}
		kept := make([]corev1.Taint, 0, len(old))
		for _, t := range old {
			if !t.MatchTaint(&taint) {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			kept = nil
		}
		return kept, verb, nil
	})
	if err != nil {
		return fmt.Errorf("%s cluster %q: %w", strings.TrimSuffix(verb, "ed"), name, err)
	}
	// karmadactl's line, dry run or not: "<cluster> cluster cordoned".
	fmt.Fprintf(out, "%s cluster %s\n", name, op)
	return nil
}
