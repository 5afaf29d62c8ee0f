// Package provider serves the members' metrics as the control plane's:
// metrics.k8s.io PodMetrics and NodeMetrics storage, and a
// custom-metrics-apiserver CustomMetricsProvider. Each request asks the
// members concurrently, each with its own deadline; an item says which
// cluster it came from (annotation resource.karmada.io/query-from-cluster)
// and a member that did not answer becomes a warning of the response. Only
// the members the caller may read are asked (access.go).
package provider

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/custom_metrics"
	cmprovider "sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// Members is what the providers read of the member clusters.
type Members interface {
	// Clusters returns the members that can be asked, sorted.
	Clusters() []string
	// PodClusters returns the members that may have pods of namespace
	// ("" for all) matching selector, sorted.
	PodClusters(namespace string, selector labels.Selector) []string
	// PodClustersNamed returns the members that may have the pod, sorted.
	PodClustersNamed(namespace, name string) []string
	// NodeClusters returns the members that may have nodes matching
	// selector, sorted.
	NodeClusters(selector labels.Selector) []string
	// NodeClustersNamed returns the members that may have the node, sorted.
	NodeClustersNamed(name string) []string
	// ResourceMetrics is a member's metrics.k8s.io client.
	ResourceMetrics(cluster string) (metricsclient.MetricsV1beta1Interface, error)
	// CustomMetrics is a member's custom.metrics.k8s.io client.
	CustomMetrics(cluster string) (custom_metrics.CustomMetricsClient, error)
	// CustomMetricInfos lists the custom metrics a member serves.
	CustomMetricInfos(ctx context.Context, cluster string) ([]cmprovider.CustomMetricInfo, error)
}
