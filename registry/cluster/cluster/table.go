package cluster

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

// TableConvertor prints clusters as Karmada does: NAME VERSION MODE READY
// AGE, and with -o wide ZONES REGION PROVIDER API-ENDPOINT PROXY-URL.
type TableConvertor struct{}

var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name of the cluster."},
	{Name: "Version", Type: "string", Description: "Kubernetes version of the cluster."},
	{Name: "Mode", Type: "string", Description: "How the control plane reaches the cluster: Push or Pull."},
	{Name: "Ready", Type: "string", Description: "Status of the Ready condition."},
	{Name: "Age", Type: "date", Description: "Time since the cluster was joined."},
	{Name: "Zones", Type: "string", Priority: 1, Description: "Zones of the cluster."},
	{Name: "Region", Type: "string", Priority: 1, Description: "Region of the cluster."},
	{Name: "Provider", Type: "string", Priority: 1, Description: "Cloud provider of the cluster."},
	{Name: "API-Endpoint", Type: "string", Priority: 1, Description: "URL of the cluster's API server."},
	{Name: "Proxy-URL", Type: "string", Priority: 1, Description: "Proxy the cluster is reached through."},
}

// ConvertToTable implements rest.TableConvertor.
func (TableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if o, ok := opts.(*metav1.TableOptions); !ok || !o.NoHeaders {
		table.ColumnDefinitions = columns
	}
	add := func(c *clusterv1alpha1.Cluster) {
		ready := "Unknown"
		if cond := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); cond != nil {
			ready = string(cond.Status)
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Object: runtime.RawExtension{Object: c},
			Cells: []any{c.Name, c.Status.KubernetesVersion, string(c.Spec.SyncMode), ready, age(c.CreationTimestamp),
				strings.Join(c.Spec.Zones, ","), c.Spec.Region, c.Spec.Provider, c.Spec.APIEndpoint, orNone(c.Spec.ProxyURL)},
		})
	}
	switch o := obj.(type) {
	case *clusterv1alpha1.Cluster:
		table.ResourceVersion = o.ResourceVersion
		add(o)
	case *clusterv1alpha1.ClusterList:
		table.ResourceVersion, table.Continue, table.RemainingItemCount = o.ResourceVersion, o.Continue, o.RemainingItemCount
		for i := range o.Items {
			add(&o.Items[i])
		}
	}
	return table, nil
}

func age(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(metav1.Now().Sub(t.Time))
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
