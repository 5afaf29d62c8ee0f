package console

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// The health classes of a cell, a row or a cluster: what the page colours.
const (
	healthy   = "healthy"
	unhealthy = "unhealthy"
	unknown   = "unknown"
)

// ClusterRow is one cluster on the overview.
type ClusterRow struct {
	Name string
	// Mode is Push or Pull.
	Mode string
	// Ready is the Ready condition's status (True, False, Unknown), and
	// Why its reason and message when it is not True.
	Ready  string
	Why    string
	Health string
	Taints []string
	// Version is the member's Kubernetes version.
	Version string
	// Nodes is "ready/total".
	Nodes string
	CPU   Bar
	Mem   Bar
	Pods  Bar
}

// Bar is an allocated-of-allocatable figure.
type Bar struct {
	Used, Total string
	// Percent is used of total, 0..100 (0 when the total is unknown).
	Percent int
}

// clusterRow is what the overview shows of c.
func clusterRow(c *clusterv1alpha1.Cluster) ClusterRow {
	r := ClusterRow{Name: c.Name, Mode: string(c.Spec.SyncMode), Ready: string(metav1.ConditionUnknown), Health: unknown,
		Version: c.Status.KubernetesVersion}
	if r.Mode == "" {
		r.Mode = string(clusterv1alpha1.Push)
	}
	if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
		r.Ready = string(cond.Status)
		switch cond.Status {
		case metav1.ConditionTrue:
			r.Health = healthy
		case metav1.ConditionFalse:
			r.Health = unhealthy
		}
		if cond.Status != metav1.ConditionTrue {
			r.Why = strings.TrimSpace(cond.Reason + ": " + cond.Message)
		}
	}
	for _, t := range c.Spec.Taints {
		s := t.Key
		if t.Value != "" {
			s += "=" + t.Value
		}
		r.Taints = append(r.Taints, s+":"+string(t.Effect))
	}
	if n := c.Status.NodeSummary; n != nil {
		r.Nodes = fmt.Sprintf("%d/%d", n.ReadyNum, n.TotalNum)
	}
	if s := c.Status.ResourceSummary; s != nil {
		r.CPU = bar(s.Allocated, s.Allocatable, corev1.ResourceCPU)
		r.Mem = bar(s.Allocated, s.Allocatable, corev1.ResourceMemory)
		r.Pods = bar(s.Allocated, s.Allocatable, corev1.ResourcePods)
	}
	return r
}

func bar(used, total corev1.ResourceList, name corev1.ResourceName) Bar {
	u, t := used[name], total[name]
	b := Bar{Used: quantity(u, name), Total: quantity(t, name)}
	if !t.IsZero() {
		b.Percent = int(min(100, max(0, u.AsApproximateFloat64()*100/t.AsApproximateFloat64())))
	}
	return b
}

// quantity prints q for a person: CPUs with up to one decimal, memory in
// GiB, counts as they are.
func quantity(q resource.Quantity, name corev1.ResourceName) string {
	switch name {
	case corev1.ResourceCPU:
		return trimZero(fmt.Sprintf("%.1f", q.AsApproximateFloat64()))
	case corev1.ResourceMemory:
		return trimZero(fmt.Sprintf("%.1f", q.AsApproximateFloat64()/(1<<30))) + " GiB"
	}
	return q.String()
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// WorkloadRow is one template and where it runs.
type WorkloadRow struct {
	// Binding is "namespace/name" of its binding ("name" for a
	// ClusterResourceBinding).
	Binding   string
	Kind      string
	Namespace string
	Name      string
	// Policy is the (Cluster)PropagationPolicy that claims it.
	Policy string
	// Cells are its clusters, in the binding's order.
	Cells []Cell
	// Replicas are the template's replicas (0 for kinds without).
	Replicas int32
	Health   string
	// Status says what is not done yet ("" when applied everywhere).
	Status string
}

// Cell is a workload in one cluster.
type Cell struct {
	Cluster  string
	Replicas int32
	// Health is healthy, unhealthy or unknown; Applied false (with
	// Message) when the member refused the manifest.
	Health  string
	Applied bool
	Message string
}

// workloadRow is what the workloads page shows of a binding.
func workloadRow(meta_ metav1.ObjectMeta, spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) WorkloadRow {
	r := WorkloadRow{Binding: meta_.Name, Kind: spec.Resource.Kind, Namespace: spec.Resource.Namespace, Name: spec.Resource.Name,
		Replicas: spec.Replicas, Health: unknown}
	if meta_.Namespace != "" {
		r.Binding = meta_.Namespace + "/" + meta_.Name
	}
	switch {
	case meta_.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation] != "":
		r.Policy = meta_.Annotations[policyv1alpha1.PropagationPolicyNameAnnotation]
	case meta_.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation] != "":
		r.Policy = "cluster: " + meta_.Annotations[policyv1alpha1.ClusterPropagationPolicyAnnotation]
	}
	items := map[string]workv1alpha2.AggregatedStatusItem{}
	for _, it := range status.AggregatedStatus {
		items[it.ClusterName] = it
	}
	all, any := true, false
	for _, tc := range spec.Clusters {
		c := Cell{Cluster: tc.Name, Replicas: tc.Replicas, Health: unknown}
		if it, ok := items[tc.Name]; ok {
			c.Applied, c.Message = it.Applied, it.AppliedMessage
			switch it.Health {
			case workv1alpha2.ResourceHealthy:
				c.Health = healthy
			case workv1alpha2.ResourceUnhealthy:
				c.Health = unhealthy
			}
			if !it.Applied && it.AppliedMessage != "" {
				c.Health = unhealthy
			}
		}
		all = all && c.Health == healthy
		any = any || c.Health == unhealthy
		r.Cells = append(r.Cells, c)
	}
	switch {
	case len(r.Cells) == 0:
		r.Status = "not scheduled"
		if cond := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); cond != nil && cond.Status == metav1.ConditionFalse {
			r.Status = "not scheduled: " + cond.Message
			r.Health = unhealthy
		}
	case any:
		r.Health = unhealthy
	case all:
		r.Health = healthy
	}
	if r.Status == "" {
		if cond := meta.FindStatusCondition(status.Conditions, workv1alpha2.FullyApplied); cond == nil || cond.Status != metav1.ConditionTrue {
			r.Status = "not applied everywhere yet"
		}
	}
	return r
}

// Matrix is workloads by cluster: each row a workload, each column a
// cluster of the fleet, each cell the workload's state there (nil where
// it does not run).
type Matrix struct {
	Clusters []string
	Rows     []MatrixRow
}

// MatrixRow is one workload across the fleet's clusters.
type MatrixRow struct {
	Workload WorkloadRow
	Cells    []*Cell
}

// matrix lays rows out over clusters (the fleet's, sorted); a cluster
// only a workload names (gone from the fleet since) gets a column too.
func matrix(clusters []string, rows []WorkloadRow) Matrix {
	cols := slices.Clone(clusters)
	for _, r := range rows {
		for _, c := range r.Cells {
			if !slices.Contains(cols, c.Cluster) {
				cols = append(cols, c.Cluster)
			}
		}
	}
	slices.Sort(cols)
	m := Matrix{Clusters: cols}
	for _, r := range rows {
		mr := MatrixRow{Workload: r, Cells: make([]*Cell, len(cols))}
		for i := range r.Cells {
			mr.Cells[slices.Index(cols, r.Cells[i].Cluster)] = &r.Cells[i]
		}
		m.Rows = append(m.Rows, mr)
	}
	return m
}
