package top

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	metricsapi "k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1api "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// Sort orders, kubectl's --sort-by.
const (
	SortByCPU    = "cpu"
	SortByMemory = "memory"
)

// metricsCreationDelay is how long a new pod may go without metrics
// before that is reported as a problem (kubectl's).
const metricsCreationDelay = 2 * time.Minute

// PodOptions are top pods' flags.
type PodOptions struct {
	// Namespace is the pods' namespace unless AllNamespaces.
	Namespace     string
	AllNamespaces bool
	// Name is one pod, instead of the selectors.
	Name          string
	LabelSelector string
	FieldSelector string
	SortBy        string
	// Containers prints a row per container.
	Containers bool
	NoHeaders  bool
	// Sum prints the total of the rows.
	Sum bool
}

// Validate checks the options that need no server.
func (o PodOptions) Validate() error {
	if err := validateSortBy(o.SortBy); err != nil {
		return err
	}
	if o.Name != "" && (o.LabelSelector != "" || o.FieldSelector != "") {
		return errors.New("only one of NAME or selector can be provided")
	}
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return err
	}
	_, err := fields.ParseSelector(o.FieldSelector)
	return err
}

func validateSortBy(s string) error {
	if s != "" && s != SortByCPU && s != SortByMemory {
		return errors.New("--sort-by accepts only cpu or memory")
	}
	return nil
}

// podRow is one pod's metrics in one member.
type podRow struct {
	cluster string
	metrics metricsapi.PodMetrics
}

// RunPods prints the usage of pods of clusters (every member when none),
// read through the control plane flags locates; without
// --all-namespaces the namespace is the flags'.
func RunPods(ctx context.Context, flags genericclioptions.RESTClientGetter, protobuf bool, clusters []string, o PodOptions, out, errOut io.Writer) error {
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return err
	}
	o.Namespace = ns
	src, err := SourceOf(flags, protobuf)
	if err != nil {
		return err
	}
	return Pods(ctx, src, clusters, o, out, errOut)
}

// Pods prints the pods' usage in clusters (every member when empty).
func Pods(ctx context.Context, src Source, clusters []string, o PodOptions, out, errOut io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	names, err := src.Clusters(ctx, clusters)
	if err != nil {
		return err
	}
	now := time.Now()
	answers := gather(ctx, src, names, func(ctx context.Context, cluster string, m Member) ([]podRow, error) {
		return readPods(ctx, cluster, m, o, now)
	})
	rows, err := merge(answers, o.Name != "" && len(clusters) == 0, apierrors.IsNotFound)
	if len(rows) == 0 && err == nil {
		if o.AllNamespaces {
			fmt.Fprintln(errOut, "No resources found")
		} else {
			fmt.Fprintf(errOut, "No resources found in %s namespace.\n", o.Namespace)
		}
	}
	printPods(out, rows, o)
	return err
}

// readPods reads one member's pod metrics. A member without the named
// pod answers the pod's NotFound; one whose pods have no metrics says why.
func readPods(ctx context.Context, cluster string, m Member, o PodOptions, now time.Time) ([]podRow, error) {
	if err := m.MetricsAPI(ctx); err != nil {
		return nil, err
	}
	ns := o.Namespace
	if o.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	var versioned []metricsv1beta1api.PodMetrics
	if o.Name != "" {
		pm, err := m.Metrics.PodMetricses(ns).Get(ctx, o.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			versioned = append(versioned, *pm)
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	} else {
		list, err := m.Metrics.PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector})
		if err != nil {
			return nil, err
		}
		versioned = list.Items
	}
	rows := make([]podRow, 0, len(versioned))
	for i := range versioned {
		r := podRow{cluster: cluster}
		if err := metricsv1beta1api.Convert_v1beta1_PodMetrics_To_metrics_PodMetrics(&versioned[i], &r.metrics, nil); err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, whyNoPodMetrics(ctx, m.Core, ns, o, now)
	}
	return rows, nil
}

// whyNoPodMetrics explains an empty answer as kubectl does: the named pod
// does not exist, or pods exist whose metrics are late (nil when there
// are no pods at all).
func whyNoPodMetrics(ctx context.Context, core corev1client.CoreV1Interface, ns string, o PodOptions, now time.Time) error {
	var pods []corev1.Pod
	if o.Name != "" {
		p, err := core.Pods(ns).Get(ctx, o.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pods = append(pods, *p)
	} else {
		list, err := core.Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector})
		if err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		pods = list.Items
	}
	for _, p := range pods {
		if age := now.Sub(p.CreationTimestamp.Time); age > metricsCreationDelay {
			return fmt.Errorf("metrics not available for pod %s/%s, age: %s", p.Namespace, p.Name, age.Round(time.Second))
		}
	}
	return errors.New("metrics not available yet")
}

// sortPods orders rows as kubectl does (by namespace and name, or by
// decreasing use), members in their order among equals.
func sortPods(rows []podRow, withNamespace bool, sortBy string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		switch sortBy {
		case SortByCPU:
			ua, ub := podUsage(a.metrics), podUsage(b.metrics)
			return ua.Cpu().MilliValue() > ub.Cpu().MilliValue()
		case SortByMemory:
			ua, ub := podUsage(a.metrics), podUsage(b.metrics)
			return ua.Memory().Value() > ub.Memory().Value()
		}
		if withNamespace && a.metrics.Namespace != b.metrics.Namespace {
			return a.metrics.Namespace < b.metrics.Namespace
		}
		if a.metrics.Name != b.metrics.Name {
			return a.metrics.Name < b.metrics.Name
		}
		return a.cluster < b.cluster
	})
}
