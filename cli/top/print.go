package top

import (
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/cli-runtime/pkg/printers"
	metricsapi "k8s.io/metrics/pkg/apis/metrics"
)

// measured are the resources top shows, in column order.
var measured = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// karmadactl top's columns: kubectl's with CLUSTER after NAME.
var (
	podColumns  = []string{"NAME", "CLUSTER", "CPU(cores)", "MEMORY(bytes)"}
	nodeColumns = []string{"NAME", "CLUSTER", "CPU(cores)", "CPU%", "MEMORY(bytes)", "MEMORY%"}
)

const unknown = "<unknown>"

// printPods prints rows (sorted here) as karmadactl top pod does.
func printPods(out io.Writer, rows []podRow, o PodOptions) {
	if len(rows) == 0 {
		return
	}
	sortPods(rows, o.AllNamespaces, o.SortBy)
	w := printers.GetNewTabWriter(out)
	defer func() { _ = w.Flush() }()
	var lead []string
	if o.AllNamespaces {
		lead = append(lead, "NAMESPACE")
	}
	if o.Containers {
		lead = append(lead, "POD")
	}
	if !o.NoHeaders {
		line(w, append(lead, podColumns...)...)
	}
	total := corev1.ResourceList{}
	for _, r := range rows {
		add(total, podUsage(r.metrics))
		var cells []string
		if o.AllNamespaces {
			cells = append(cells, r.metrics.Namespace)
		}
		if !o.Containers {
			line(w, append(cells, usageCells(r.metrics.Name, r.cluster, podUsage(r.metrics), nil)...)...)
			continue
		}
		for _, c := range containersSorted(r.metrics.Containers, o.SortBy) {
			line(w, append(append(cells, r.metrics.Name), usageCells(c.Name, r.cluster, c.Usage, nil)...)...)
		}
	}
	if o.Sum {
		blank := make([]string, len(lead)+len(podColumns)-len(measured))
		line(w, append(blank, "________", "________")...)
		line(w, append(blank, usageCells("", "", total, nil)[2:]...)...)
	}
}

// printNodes prints rows (sorted here) as karmadactl top node does.
func printNodes(out io.Writer, rows []nodeRow, o NodeOptions) {
	if len(rows) == 0 {
		return
	}
	sortNodes(rows, o.SortBy)
	w := printers.GetNewTabWriter(out)
	defer func() { _ = w.Flush() }()
	if !o.NoHeaders {
		line(w, nodeColumns...)
	}
	for _, r := range rows {
		if r.usage == nil {
			cells := []string{r.name, r.cluster}
			for range measured {
				cells = append(cells, unknown, unknown)
			}
			line(w, cells...)
			continue
		}
		line(w, usageCells(r.name, r.cluster, r.usage, r.available)...)
	}
}

// usageCells are a row's name, cluster and, per measured resource, its
// use and, when available is given, the percentage of it.
func usageCells(name, cluster string, usage, available corev1.ResourceList) []string {
	cells := []string{name, cluster}
	for _, res := range measured {
		q := usage[res]
		cells = append(cells, quantity(res, q))
		if available != nil {
			a, ok := available[res]
			switch {
			case ok && a.MilliValue() > 0:
				cells = append(cells, fmt.Sprintf("%d%%", int64(float64(q.MilliValue())/float64(a.MilliValue())*100)))
			default:
				cells = append(cells, unknown)
			}
		}
	}
	return cells
}

// quantity prints CPU in millicores and memory in MiB, as kubectl top.
func quantity(res corev1.ResourceName, q resource.Quantity) string {
	switch res {
	case corev1.ResourceCPU:
		return fmt.Sprintf("%dm", q.MilliValue())
	case corev1.ResourceMemory:
		return fmt.Sprintf("%dMi", q.Value()/(1024*1024))
	default:
		return fmt.Sprintf("%d", q.Value())
	}
}

// podUsage sums a pod's containers.
func podUsage(m metricsapi.PodMetrics) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, res := range measured {
		sum[res] = resource.MustParse("0")
	}
	for _, c := range m.Containers {
		add(sum, c.Usage)
	}
	return sum
}

func add(total, usage corev1.ResourceList) {
	for _, res := range measured {
		q := total[res]
		q.Add(usage[res])
		total[res] = q
	}
}

// containersSorted returns a pod's containers by name or decreasing use.
func containersSorted(cs []metricsapi.ContainerMetrics, sortBy string) []metricsapi.ContainerMetrics {
	out := append([]metricsapi.ContainerMetrics(nil), cs...)
	rows := make([]podRow, len(out))
	for i, c := range out {
		rows[i] = podRow{metrics: metricsapi.PodMetrics{Containers: []metricsapi.ContainerMetrics{c}}}
		rows[i].metrics.Name = c.Name
	}
	sortPods(rows, false, sortBy)
	for i, r := range rows {
		out[i] = r.metrics.Containers[0]
	}
	return out
}

func line(w io.Writer, cells ...string) {
	_, _ = io.WriteString(w, strings.Join(cells, "\t")+"\n")
}
