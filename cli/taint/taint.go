package taint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/util/retry"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	clustervalidation "github.com/flotilla-io/flotilla/apis/cluster/validation"
	clusterclient "github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/typed/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/cli/controlplane"
)

// What a taint command did to a cluster, as kubectl taint reports it.
const (
	opTainted   = "tainted"
	opUntainted = "untainted"
	opModified  = "modified"
)

// Options holds the arguments and flags of taint.
type Options struct {
	Overwrite bool
	DryRun    bool

	clusters []string
	add      []corev1.Taint
	remove   []corev1.Taint
}

// Run applies the taint changes of args (taint clusters NAME...
// KEY=VALUE:EFFECT...) to the Clusters of the control plane flags
// locates, reporting each on out.
func (o *Options) Run(ctx context.Context, flags genericclioptions.RESTClientGetter, args []string, out io.Writer) error {
	if err := o.complete(args); err != nil {
		return err
	}
	cp, err := controlplane.ClientsOf(flags)
	if err != nil {
		return err
	}
	return o.run(ctx, cp.Karmada.ClusterV1alpha1().Clusters(), out)
}

// complete splits the arguments into clusters and taint changes and parses them.
func (o *Options) complete(args []string) error {
	resources, specs, err := splitTaintArgs(args)
	if err != nil {
		return err
	}
	if o.clusters, err = clusterNames(resources); err != nil {
		return err
	}
	if len(specs) == 0 {
		return errors.New("at least one taint update is required")
	}
	if o.add, o.remove, err = parseTaints(specs); err != nil {
		return err
	}
	var conflicts []string
	for _, a := range o.add {
		for _, r := range o.remove {
			if a.Key == r.Key && (r.Effect == "" || r.Effect == a.Effect) {
				conflicts = append(conflicts, fmt.Sprintf("%s:%s", r.Key, r.Effect))
			}
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("can not both modify and remove the following taint(s) in the same command: %s", strings.Join(conflicts, ", "))
	}
	return nil
}

// splitTaintArgs separates "clusters NAME..." from the taint changes that
// follow, as kubectl taint does: an argument with '=' or ':' or a trailing
// '-' is a taint change, and all resources come first.
func splitTaintArgs(args []string) (resources, specs []string, err error) {
	for _, a := range args {
		isTaint := strings.Contains(a, "=") || strings.Contains(a, ":") || strings.HasSuffix(a, "-")
		switch {
		case isTaint:
			specs = append(specs, a)
		case len(specs) > 0:
			return nil, nil, fmt.Errorf("all resources must be specified before taint changes: %s", a)
		default:
			resources = append(resources, a)
		}
	}
	return resources, specs, nil
}

// isClusterResource says whether a kubectl resource name means clusters.
func isClusterResource(r string) bool {
	switch strings.ToLower(r) {
	case "cluster", "clusters", "cluster.cluster.karmada.io", "clusters.cluster.karmada.io":
		return true
	}
	return false
}

// clusterNames reads "clusters NAME..." or "clusters/NAME...".
func clusterNames(resources []string) ([]string, error) {
	if len(resources) == 0 {
		return nil, errors.New("one or more resources must be specified as clusters NAME")
	}
	var names []string
	if strings.Contains(resources[0], "/") {
		for _, r := range resources {
			typ, name, ok := strings.Cut(r, "/")
			if !ok || !isClusterResource(typ) {
				return nil, fmt.Errorf("invalid resource %q: only clusters/NAME is supported (mixing TYPE/NAME and TYPE NAME is not)", r)
			}
			names = append(names, name)
		}
	} else {
		if !isClusterResource(resources[0]) {
			return nil, fmt.Errorf("invalid resource type %q: only clusters are supported", resources[0])
		}
		names = resources[1:]
	}
	if len(names) == 0 {
		return nil, errors.New("at least one cluster name must be specified")
	}
	for _, n := range names {
		if msgs := clustervalidation.ValidateClusterName(n, false); len(msgs) > 0 {
			return nil, fmt.Errorf("invalid cluster name %q: %s", n, strings.Join(msgs, "; "))
		}
	}
	return names, nil
}

// parseTaints parses kubectl taint specs into taints to add and to remove.
func parseTaints(specs []string) (add, remove []corev1.Taint, err error) {
	seen := map[corev1.TaintEffect]map[string]bool{}
	for _, spec := range specs {
		if s, ok := strings.CutSuffix(spec, "-"); ok {
			t, err := parseTaint(s)
			if err != nil {
				return nil, nil, err
			}
			remove = append(remove, corev1.Taint{Key: t.Key, Effect: t.Effect})
			continue
		}
		t, err := parseTaint(spec)
		if err != nil {
			return nil, nil, err
		}
		if t.Effect == "" {
			return nil, nil, fmt.Errorf("invalid taint spec: %v, an effect is required to add a taint", spec)
		}
		if seen[t.Effect][t.Key] {
			return nil, nil, fmt.Errorf("duplicated taints with the same key and effect: %v", spec)
		}
		if seen[t.Effect] == nil {
			seen[t.Effect] = map[string]bool{}
		}
		seen[t.Effect][t.Key] = true
		add = append(add, t)
	}
	return add, remove, nil
}

// parseTaint parses key=value:effect, key:effect or key.
func parseTaint(spec string) (corev1.Taint, error) {
	var t corev1.Taint
	parts := strings.Split(spec, ":")
	switch len(parts) {
	case 1:
		t.Key = parts[0]
	case 2:
		t.Effect = corev1.TaintEffect(parts[1])
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return t, fmt.Errorf("invalid taint effect: %v, unsupported taint effect (want NoSchedule, PreferNoSchedule or NoExecute)", parts[1])
		}
		kv := strings.Split(parts[0], "=")
		if len(kv) > 2 {
			return t, fmt.Errorf("invalid taint spec: %v", spec)
		}
		t.Key = kv[0]
		if len(kv) == 2 {
			t.Value = kv[1]
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(msgs, "; "))
			}
		}
	default:
		return t, fmt.Errorf("invalid taint spec: %v", spec)
	}
	if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
		return t, fmt.Errorf("invalid taint spec: %v, %s", spec, strings.Join(msgs, "; "))
	}
	return t, nil
}

// applyTaints returns old with the changes applied, keeping the order of the
// taints that stay, and what kubectl would call the operation. Adding a taint
// whose key and effect exist is an error unless overwrite; removing a taint
// that does not exist is an error. A replaced taint keeps its timeAdded when
// its value does not change, so NoExecute eviction timers do not restart.
func applyTaints(old, add, remove []corev1.Taint, overwrite bool) ([]corev1.Taint, string, error) {
	var errs []error
	out := make([]corev1.Taint, 0, len(old)+len(add))
	replaced := map[int]bool{}
	for _, t := range old {
		i := indexTaint(add, t.Key, t.Effect)
		if i < 0 {
			out = append(out, t)
			continue
		}
		if !overwrite {
			errs = append(errs, fmt.Errorf("a taint with key %s and effect %s already exists and --overwrite is false", t.Key, t.Effect))
			continue
		}
		n := add[i]
		if n.Value == t.Value && n.TimeAdded == nil {
			n.TimeAdded = t.TimeAdded
		}
		out = append(out, n)
		replaced[i] = true
	}
	for i, t := range add {
		if !replaced[i] {
			out = append(out, t)
		}
	}
	for _, r := range remove {
		kept := out[:0]
		for _, t := range out {
			if t.Key == r.Key && (r.Effect == "" || t.Effect == r.Effect) {
				continue
			}
			kept = append(kept, t)
		}
		if len(kept) == len(out) {
			errs = append(errs, fmt.Errorf("taint %q not found", r.ToString()))
		}
		out = kept
	}
	if len(errs) > 0 {
		return nil, "", utilerrors.NewAggregate(errs)
	}
	op := opModified
	switch {
	case len(replaced) == 0 && len(remove) == 0:
		op = opTainted
	case len(replaced) == 0 && len(add) == 0:
		op = opUntainted
	}
	if len(out) == 0 {
		out = nil
	}
	return out, op, nil
}

func indexTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) int {
	for i := range taints {
		if taints[i].Key == key && taints[i].Effect == effect {
			return i
		}
	}
	return -1
}

// run applies the changes to every cluster, reporting each; it goes on after
// a failure and returns all errors.
func (o *Options) run(ctx context.Context, clusters clusterclient.ClusterInterface, out io.Writer) error {
	var errs []error
	for _, name := range o.clusters {
		op, err := updateTaints(ctx, clusters, name, o.DryRun, func(old []corev1.Taint) ([]corev1.Taint, string, error) {
			return applyTaints(old, o.add, o.remove, o.Overwrite)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("taint cluster %q: %w", name, err))
			continue
		}
		report(out, name, op, o.DryRun)
	}
	return utilerrors.NewAggregate(errs)
}

// updateTaints reads the cluster, computes its new taints with change and
// writes them when they differ, retrying on conflicts.
func updateTaints(ctx context.Context, clusters clusterclient.ClusterInterface, name string, dryRun bool,
	change func([]corev1.Taint) ([]corev1.Taint, string, error)) (string, error) {
	var op string
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c, err := clusters.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading cluster %s: %w", name, err)
		}
		taints, o, err := change(c.Spec.Taints)
		if err != nil {
			return err
		}
		op = o
		if dryRun || equality.Semantic.DeepEqual(taints, c.Spec.Taints) {
			return nil
		}
		c.Spec.Taints = taints
		if _, err := clusters.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the taints of cluster %s: %w", name, err)
		}
		return nil
	})
	return op, err
}

func report(out io.Writer, name, op string, dryRun bool) {
	if dryRun {
		fmt.Fprintf(out, "cluster/%s %s (dry run)\n", name, op)
		return
	}
	fmt.Fprintf(out, "cluster/%s %s\n", name, op)
}

// unschedulableTaint is what cordon adds and uncordon removes.
func unschedulableTaint() corev1.Taint {
	return corev1.Taint{Key: clusterv1alpha1.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}
}
