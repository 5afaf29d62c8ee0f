package federatedhpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	externalmetricsv1beta1 "k8s.io/metrics/pkg/apis/external_metrics/v1beta1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/metrics/pkg/client/custom_metrics"
	"k8s.io/metrics/pkg/client/external_metrics"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/podautoscaler"
)

// MetricsSource reads the control plane's metrics APIs.
type MetricsSource interface {
	// PodMetrics lists the resource metrics of the pods selector matches,
	// each marked with its member cluster.
	PodMetrics(ctx context.Context, namespace string, selector labels.Selector) (*metricsv1beta1.PodMetricsList, error)
	// PodsMetric reads a custom metric of the pods selector matches.
	PodsMetric(namespace, metric string, selector, metricSelector labels.Selector) (*custommetricsv1beta2.MetricValueList, error)
	// ObjectMetric reads a custom metric of one object.
	ObjectMetric(namespace, metric string, object schema.GroupKind, name string, metricSelector labels.Selector) (*custommetricsv1beta2.MetricValue, error)
	// ExternalMetric reads an external metric.
	ExternalMetric(namespace, metric string, metricSelector labels.Selector) (*externalmetricsv1beta1.ExternalMetricValueList, error)
}

// clientSource is MetricsSource over the control plane's aggregated APIs.
type clientSource struct {
	resource metricsclient.Interface
	custom   custom_metrics.CustomMetricsClient
	external external_metrics.ExternalMetricsClient
}

// NewMetricsSource reads metrics through the API server cfg reaches (the
// host, which routes the metrics groups to flotilla-apiserver).
func NewMetricsSource(cfg *rest.Config, mapper meta.RESTMapper) (MetricsSource, error) {
	resource, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	external, err := external_metrics.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &clientSource{resource: resource, external: external,
		custom: custom_metrics.NewForConfig(cfg, mapper, custom_metrics.NewAvailableAPIsGetter(disco))}, nil
}

func (s *clientSource) PodMetrics(ctx context.Context, namespace string, selector labels.Selector) (*metricsv1beta1.PodMetricsList, error) {
	return s.resource.MetricsV1beta1().PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
}

func (s *clientSource) PodsMetric(namespace, metric string, selector, metricSelector labels.Selector) (*custommetricsv1beta2.MetricValueList, error) {
	return s.custom.NamespacedMetrics(namespace).GetForObjects(schema.GroupKind{Kind: "Pod"}, selector, metric, metricSelector)
}

func (s *clientSource) ObjectMetric(namespace, metric string, object schema.GroupKind, name string, metricSelector labels.Selector) (*custommetricsv1beta2.MetricValue, error) {
	if namespace == "" {
		return s.custom.RootScopedMetrics().GetForObject(object, name, metric, metricSelector)
	}
	return s.custom.NamespacedMetrics(namespace).GetForObject(object, name, metric, metricSelector)
}

func (s *clientSource) ExternalMetric(namespace, metric string, metricSelector labels.Selector) (*externalmetricsv1beta1.ExternalMetricValueList, error) {
	return s.external.NamespacedMetrics(namespace).List(metric, metricSelector)
}

// metricReader reads the data of a FederatedHPA's metrics for the pods
// found in the members.
type metricReader struct {
	source    MetricsSource
	namespace string
	selector  labels.Selector
	pods      []podautoscaler.Pod
	// resourceList is the PodMetrics list, read once for every Resource
	// and ContainerResource metric of the sync.
	resourceList *metricsv1beta1.PodMetricsList
	resourceErr  error
	resourceRead bool
}

// read returns the data of one spec.metrics entry.
func (r *metricReader) read(ctx context.Context, spec autoscalingv2.MetricSpec) podautoscaler.MetricData {
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			return podautoscaler.MetricData{}
		}
		return r.resource(ctx, spec.Resource.Name, "")
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			return podautoscaler.MetricData{}
		}
		return r.resource(ctx, spec.ContainerResource.Name, spec.ContainerResource.Container)
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			return podautoscaler.MetricData{}
		}
		return r.podsMetric(spec.Pods.Metric)
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			return podautoscaler.MetricData{}
		}
		return r.objectMetric(spec.Object)
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			return podautoscaler.MetricData{}
		}
		return r.externalMetric(spec.External.Metric)
	}
	return podautoscaler.MetricData{}
}

// resource is a Resource (container "") or ContainerResource metric: each
// pod's usage summed over its containers (or the named container's); a pod
// missing a container's sample has none, as upstream.
func (r *metricReader) resource(ctx context.Context, name corev1.ResourceName, container string) podautoscaler.MetricData {
	if !r.resourceRead {
		r.resourceList, r.resourceErr = r.source.PodMetrics(ctx, r.namespace, r.selector)
		r.resourceRead = true
	}
	if r.resourceErr != nil {
		return podautoscaler.MetricData{Err: r.resourceErr}
	}
	if len(r.resourceList.Items) == 0 {
		return podautoscaler.MetricData{Err: errors.New("no metrics returned from resource metrics API")}
	}
	samples := podautoscaler.PodMetrics{}
	for _, pm := range r.resourceList.Items {
		var sum int64
		found, missing := false, false
		for _, c := range pm.Containers {
			if container != "" && c.Name != container {
				continue
			}
			v, ok := c.Usage[name]
			if !ok {
				missing = true
				break
			}
			sum += v.MilliValue()
			found = true
		}
		if missing || !found {
			continue
		}
		key := podautoscaler.PodKey{Cluster: pm.Annotations[autoscalingv1alpha1.QuerySourceAnnotationKey], Namespace: pm.Namespace, Name: pm.Name}
		samples[key] = podautoscaler.PodMetric{Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration, Value: sum}
	}
	return podautoscaler.MetricData{PodMetrics: samples}
}

// podsMetric is a Pods metric. The custom metrics API names pods without
// their cluster (values of pods sharing a name are summed by the adapter);
// the value goes to every pod of that name.
func (r *metricReader) podsMetric(m autoscalingv2.MetricIdentifier) podautoscaler.MetricData {
	sel, err := metricSelector(m.Selector)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	list, err := r.source.PodsMetric(r.namespace, m.Name, r.selector, sel)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	if len(list.Items) == 0 {
		return podautoscaler.MetricData{Err: errors.New("no metrics returned from custom metrics API")}
	}
	byName := map[string][]podautoscaler.PodKey{}
	for i := range r.pods {
		byName[r.pods[i].Name] = append(byName[r.pods[i].Name], r.pods[i].Key())
	}
	samples := podautoscaler.PodMetrics{}
	for _, v := range list.Items {
		window := time.Minute
		if v.WindowSeconds != nil {
			window = time.Duration(*v.WindowSeconds) * time.Second
		}
		for _, key := range byName[v.DescribedObject.Name] {
			samples[key] = podautoscaler.PodMetric{Timestamp: v.Timestamp.Time, Window: window, Value: v.Value.MilliValue()}
		}
	}
	return podautoscaler.MetricData{PodMetrics: samples}
}

func (r *metricReader) objectMetric(o *autoscalingv2.ObjectMetricSource) podautoscaler.MetricData {
	sel, err := metricSelector(o.Metric.Selector)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	gv, err := schema.ParseGroupVersion(o.DescribedObject.APIVersion)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	v, err := r.source.ObjectMetric(r.namespace, o.Metric.Name, gv.WithKind(o.DescribedObject.Kind).GroupKind(), o.DescribedObject.Name, sel)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	return podautoscaler.MetricData{Value: v.Value.MilliValue(), Timestamp: v.Timestamp.Time}
}

func (r *metricReader) externalMetric(m autoscalingv2.MetricIdentifier) podautoscaler.MetricData {
	sel, err := metricSelector(m.Selector)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	list, err := r.source.ExternalMetric(r.namespace, m.Name, sel)
	if err != nil {
		return podautoscaler.MetricData{Err: err}
	}
	if len(list.Items) == 0 {
		return podautoscaler.MetricData{Err: errors.New("no metrics returned from external metrics API")}
	}
	d := podautoscaler.MetricData{Timestamp: list.Items[0].Timestamp.Time}
	for _, v := range list.Items {
		d.Values = append(d.Values, v.Value.MilliValue())
	}
	return d
}

func metricSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fmt.Errorf("invalid metric selector: %w", err)
	}
	return sel, nil
}
