package top

import (
	"context"
	"errors"
	"io"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	metricsapi "k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1api "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// NodeOptions are top nodes' flags.
type NodeOptions struct {
	// Name is one node, instead of the selector.
	Name          string
	LabelSelector string
	SortBy        string
	NoHeaders     bool
	// ShowCapacity divides by the nodes' capacity instead of allocatable.
	ShowCapacity bool
}

// Validate checks the options that need no server.
func (o NodeOptions) Validate() error {
	if err := validateSortBy(o.SortBy); err != nil {
		return err
	}
	if o.Name != "" && o.LabelSelector != "" {
		return errors.New("only one of NAME or --selector can be provided")
	}
	_, err := labels.Parse(o.LabelSelector)
	return err
}

// nodeRow is one node of one member; usage is nil when metrics-server has
// none for it.
type nodeRow struct {
	cluster   string
	name      string
	usage     corev1.ResourceList
	available corev1.ResourceList
}

// RunNodes prints the usage of nodes of clusters (every member when
// none), read through the control plane flags locates.
func RunNodes(ctx context.Context, flags genericclioptions.RESTClientGetter, protobuf bool, clusters []string, o NodeOptions, out, errOut io.Writer) error {
	src, err := SourceOf(flags, protobuf)
	if err != nil {
		return err
	}
	return Nodes(ctx, src, clusters, o, out, errOut)
}

// Nodes prints the nodes' usage in clusters (every member when empty).
func Nodes(ctx context.Context, src Source, clusters []string, o NodeOptions, out, errOut io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	names, err := src.Clusters(ctx, clusters)
	if err != nil {
		return err
	}
	answers := gather(ctx, src, names, func(ctx context.Context, cluster string, m Member) ([]nodeRow, error) {
		return readNodes(ctx, cluster, m, o)
	})
	rows, err := merge(answers, o.Name != "" && len(clusters) == 0, apierrors.IsNotFound)
	if len(rows) == 0 && err == nil {
		_, _ = io.WriteString(errOut, "No resources found\n")
	}
	printNodes(out, rows, o)
	return err
}

// readNodes reads one member's node metrics and the nodes they divide by.
func readNodes(ctx context.Context, cluster string, m Member, o NodeOptions) ([]nodeRow, error) {
	if err := m.MetricsAPI(ctx); err != nil {
		return nil, err
	}
	var versioned []metricsv1beta1api.NodeMetrics
	var nodes []corev1.Node
	if o.Name != "" {
		// The node first: a member without it says so plainly.
		n, err := m.Core.Nodes().Get(ctx, o.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, *n)
		nm, err := m.Metrics.NodeMetricses().Get(ctx, o.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			versioned = append(versioned, *nm)
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	} else {
		list, err := m.Metrics.NodeMetricses().List(ctx, metav1.ListOptions{LabelSelector: o.LabelSelector})
		if err != nil {
			return nil, err
		}
		versioned = list.Items
		nl, err := m.Core.Nodes().List(ctx, metav1.ListOptions{LabelSelector: o.LabelSelector})
		if err != nil {
			return nil, err
		}
		nodes = nl.Items
	}
	if len(versioned) == 0 {
		return nil, errors.New("metrics not available yet")
	}
	usage := make(map[string]corev1.ResourceList, len(versioned))
	for i := range versioned {
		var nm metricsapi.NodeMetrics
		if err := metricsv1beta1api.Convert_v1beta1_NodeMetrics_To_metrics_NodeMetrics(&versioned[i], &nm, nil); err != nil {
			return nil, err
		}
		usage[nm.Name] = nm.Usage
	}
	return nodeRows(cluster, nodes, usage, o.ShowCapacity), nil
}

// nodeRows joins a member's nodes with their usage: a node without
// metrics is a row without usage, metrics without a node are dropped (the
// node is gone).
func nodeRows(cluster string, nodes []corev1.Node, usage map[string]corev1.ResourceList, capacity bool) []nodeRow {
	rows := make([]nodeRow, 0, len(nodes))
	for _, n := range nodes {
		available := n.Status.Allocatable
		if capacity {
			available = n.Status.Capacity
		}
		rows = append(rows, nodeRow{cluster: cluster, name: n.Name, usage: usage[n.Name], available: available})
	}
	return rows
}

// sortNodes orders rows as kubectl does (by name, or by decreasing use),
// nodes without metrics last, members in their order among equals.
func sortNodes(rows []nodeRow, sortBy string) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if (a.usage == nil) != (b.usage == nil) {
			return b.usage == nil
		}
		switch sortBy {
		case SortByCPU:
			return a.usage.Cpu().MilliValue() > b.usage.Cpu().MilliValue()
		case SortByMemory:
			return a.usage.Memory().Value() > b.usage.Memory().Value()
		}
		if a.name != b.name {
			return a.name < b.name
		}
		return a.cluster < b.cluster
	})
}
