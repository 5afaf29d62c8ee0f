package provider

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	memberaccess "github.com/flotilla-io/flotilla/member/access"
)

// PodMetrics is the storage of podmetrics: the members' PodMetrics of the
// pods a request names, from the members that have such pods and let the
// caller read them.
type PodMetrics struct {
	Members Members
	// Timeout bounds each member's answer.
	Timeout time.Duration
	// Access decides which members the caller may read; nil allows none.
	Access *memberaccess.Checker
}

var (
	_ rest.Storage              = &PodMetrics{}
	_ rest.KindProvider         = &PodMetrics{}
	_ rest.Scoper               = &PodMetrics{}
	_ rest.Getter               = &PodMetrics{}
	_ rest.Lister               = &PodMetrics{}
	_ rest.TableConvertor       = &PodMetrics{}
	_ rest.SingularNameProvider = &PodMetrics{}
)

func (*PodMetrics) New() runtime.Object     { return &metrics.PodMetrics{} }
func (*PodMetrics) NewList() runtime.Object { return &metrics.PodMetricsList{} }
func (*PodMetrics) Destroy()                {}
func (*PodMetrics) Kind() string            { return "PodMetrics" }
func (*PodMetrics) NamespaceScoped() bool   { return true }
func (*PodMetrics) GetSingularName() string { return "podmetrics" }

// List asks the members with matching pods for their PodMetrics, with the
// request's selectors.
func (m *PodMetrics) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	opts, selector := listOptions(options)
	clusters := readable(ctx, m.Access, m.Members.PodClusters(namespace, selector), metricsAttrs("list", "pods", namespace, ""))
	answers := gather(ctx, clusters, m.Timeout,
		func(ctx context.Context, cluster string) ([]metricsv1beta1.PodMetrics, error) {
			c, err := m.Members.ResourceMetrics(cluster)
			if err != nil {
				return nil, err
			}
			l, err := c.PodMetricses(namespace).List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return l.Items, nil
		})
	items, err := mergeItems(ctx, answers, metricsv1beta1.Convert_v1beta1_PodMetrics_To_metrics_PodMetrics,
		func(pm *metrics.PodMetrics) *metav1.ObjectMeta { return &pm.ObjectMeta })
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return &metrics.PodMetricsList{Items: items}, nil
}

// Get returns the PodMetrics of the first member (by name) that has the pod.
func (m *PodMetrics) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	namespace := genericapirequest.NamespaceValue(ctx)
	clusters := readable(ctx, m.Access, m.Members.PodClustersNamed(namespace, name), metricsAttrs("get", "pods", namespace, name))
	answers := gather(ctx, clusters, m.Timeout,
		func(ctx context.Context, cluster string) (*metricsv1beta1.PodMetrics, error) {
			c, err := m.Members.ResourceMetrics(cluster)
			if err != nil {
				return nil, err
			}
			return c.PodMetricses(namespace).Get(ctx, name, metav1.GetOptions{})
		})
	pm, err := firstFound(ctx, answers, metricsv1beta1.Convert_v1beta1_PodMetrics_To_metrics_PodMetrics,
		func(pm *metrics.PodMetrics) *metav1.ObjectMeta { return &pm.ObjectMeta })
	if err != nil {
		return nil, err
	}
	if pm == nil {
		return nil, apierrors.NewNotFound(metrics.Resource("pods"), namespace+"/"+name)
	}
	return pm, nil
}

// ConvertToTable shows each pod's summed usage per resource and the window.
func (*PodMetrics) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	var items []metrics.PodMetrics
	table := &metav1.Table{}
	switch t := object.(type) {
	case *metrics.PodMetrics:
		items = []metrics.PodMetrics{*t}
	case *metrics.PodMetricsList:
		items = t.Items
		table.Continue = t.Continue
	default:
		return nil, fmt.Errorf("unexpected object %T", object)
	}
	rows := make([]usageRow, len(items))
	for i := range items {
		usage := corev1.ResourceList{}
		for _, c := range items[i].Containers {
			for k, v := range c.Usage {
				sum := usage[k]
				sum.Add(v)
				usage[k] = sum
			}
		}
		rows[i] = usageRow{meta: items[i].ObjectMeta, usage: usage, window: items[i].Window.Duration, object: &items[i]}
	}
	fillUsageTable(table, rows)
	return table, nil
}

// NodeMetrics is the storage of nodes (NodeMetrics): the members'
// NodeMetrics of the nodes a request names, from the members that let the
// caller read them.
type NodeMetrics struct {
	Members Members
	Timeout time.Duration
	// Access decides which members the caller may read; nil allows none.
	Access *memberaccess.Checker
}

var (
	_ rest.Storage              = &NodeMetrics{}
	_ rest.KindProvider         = &NodeMetrics{}
	_ rest.Scoper               = &NodeMetrics{}
	_ rest.Getter               = &NodeMetrics{}
	_ rest.Lister               = &NodeMetrics{}
	_ rest.TableConvertor       = &NodeMetrics{}
	_ rest.SingularNameProvider = &NodeMetrics{}
)

func (*NodeMetrics) New() runtime.Object     { return &metrics.NodeMetrics{} }
func (*NodeMetrics) NewList() runtime.Object { return &metrics.NodeMetricsList{} }
func (*NodeMetrics) Destroy()                {}
func (*NodeMetrics) Kind() string            { return "NodeMetrics" }
func (*NodeMetrics) NamespaceScoped() bool   { return false }
func (*NodeMetrics) GetSingularName() string { return "nodemetrics" }

// List asks the members with matching nodes for their NodeMetrics.
func (m *NodeMetrics) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	opts, selector := listOptions(options)
	clusters := readable(ctx, m.Access, m.Members.NodeClusters(selector), metricsAttrs("list", "nodes", "", ""))
	answers := gather(ctx, clusters, m.Timeout,
		func(ctx context.Context, cluster string) ([]metricsv1beta1.NodeMetrics, error) {
			c, err := m.Members.ResourceMetrics(cluster)
			if err != nil {
				return nil, err
			}
			l, err := c.NodeMetricses().List(ctx, opts)
			if err != nil {
				return nil, err
			}
			return l.Items, nil
		})
	items, err := mergeItems(ctx, answers, metricsv1beta1.Convert_v1beta1_NodeMetrics_To_metrics_NodeMetrics,
		func(nm *metrics.NodeMetrics) *metav1.ObjectMeta { return &nm.ObjectMeta })
	if err != nil {
		return nil, err
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return &metrics.NodeMetricsList{Items: items}, nil
}

// Get returns the NodeMetrics of the first member (by name) with the node.
func (m *NodeMetrics) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	clusters := readable(ctx, m.Access, m.Members.NodeClustersNamed(name), metricsAttrs("get", "nodes", "", name))
	answers := gather(ctx, clusters, m.Timeout,
		func(ctx context.Context, cluster string) (*metricsv1beta1.NodeMetrics, error) {
			c, err := m.Members.ResourceMetrics(cluster)
			if err != nil {
				return nil, err
			}
			return c.NodeMetricses().Get(ctx, name, metav1.GetOptions{})
		})
	nm, err := firstFound(ctx, answers, metricsv1beta1.Convert_v1beta1_NodeMetrics_To_metrics_NodeMetrics,
		func(nm *metrics.NodeMetrics) *metav1.ObjectMeta { return &nm.ObjectMeta })
	if err != nil {
		return nil, err
	}
	if nm == nil {
		return nil, apierrors.NewNotFound(metrics.Resource("nodes"), name)
	}
	return nm, nil
}

// ConvertToTable shows each node's usage per resource and the window.
func (*NodeMetrics) ConvertToTable(_ context.Context, object runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	var items []metrics.NodeMetrics
	table := &metav1.Table{}
	switch t := object.(type) {
	case *metrics.NodeMetrics:
		items = []metrics.NodeMetrics{*t}
	case *metrics.NodeMetricsList:
		items = t.Items
		table.Continue = t.Continue
	default:
		return nil, fmt.Errorf("unexpected object %T", object)
	}
	rows := make([]usageRow, len(items))
	for i := range items {
		rows[i] = usageRow{meta: items[i].ObjectMeta, usage: items[i].Usage, window: items[i].Window.Duration, object: &items[i]}
	}
	fillUsageTable(table, rows)
	return table, nil
}

// listOptions is what is passed on to the members, and the label selector
// that locates them.
func listOptions(options *metainternalversion.ListOptions) (metav1.ListOptions, labels.Selector) {
	selector := labels.Everything()
	var opts metav1.ListOptions
	if options == nil {
		return opts, selector
	}
	if options.LabelSelector != nil {
		selector = options.LabelSelector
		opts.LabelSelector = selector.String()
	}
	if options.FieldSelector != nil {
		opts.FieldSelector = options.FieldSelector.String()
	}
	return opts, selector
}

// markSource annotates an item with the member it came from.
func markSource(m *metav1.ObjectMeta, cluster string) {
	if m.Annotations == nil {
		m.Annotations = make(map[string]string, 1)
	}
	m.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey] = cluster
}

// unavailable is the error when no member answered.
func unavailable(failed map[string]error) error {
	names := make([]string, 0, len(failed))
	for c, err := range failed {
		names = append(names, fmt.Sprintf("%s: %v", c, err))
	}
	sort.Strings(names)
	return apierrors.NewServiceUnavailable(fmt.Sprintf("no member answered: %v", names))
}

type usageRow struct {
	meta   metav1.ObjectMeta
	usage  corev1.ResourceList
	window time.Duration
	object runtime.Object
}

// fillUsageTable lays rows out as metrics-server does, with the source
// cluster as a column.
func fillUsageTable(table *metav1.Table, rows []usageRow) {
	names := map[corev1.ResourceName]bool{}
	for _, r := range rows {
		for k := range r.usage {
			names[k] = true
		}
	}
	sorted := make([]corev1.ResourceName, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	table.ColumnDefinitions = []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the resource"},
		{Name: "Cluster", Type: "string", Description: "Member cluster the metrics came from"},
	}
	for _, k := range sorted {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: string(k), Type: "string", Format: "quantity"})
	}
	table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: "Window", Type: "string", Format: "duration"})
	for _, r := range rows {
		cells := []any{r.meta.Name, r.meta.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey]}
		for _, k := range sorted {
			v := r.usage[k]
			cells = append(cells, v.String())
		}
		cells = append(cells, r.window.String())
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: r.object}})
	}
}
