package main

import (
	"context"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// AnnotationPrefix marks a pod annotation as an emulated metric: a pod
// annotated custom-metrics.flotilla.io/<metric>: "<quantity>" reports that
// value for <metric>.
const AnnotationPrefix = "custom-metrics.flotilla.io/"

// windowSeconds is the window every emulated value claims to cover.
const windowSeconds int64 = 60

var podsResource = schema.GroupResource{Resource: "pods"}

// podAnnotations is a custom metrics provider whose values are the pods'
// annotations. Metrics have no labels: a metric selector other than
// "everything" matches nothing.
type podAnnotations struct {
	pods corelisters.PodLister
	now  func() time.Time
}

var _ provider.CustomMetricsProvider = &podAnnotations{}

// GetMetricByName returns the metric of one pod.
func (p *podAnnotations) GetMetricByName(_ context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValue, error) {
	notFound := provider.NewMetricNotFoundForError(info.GroupResource, info.Metric, name.Name)
	if !p.serves(info, metricSelector) {
		return nil, notFound
	}
	pod, err := p.pods.Pods(name.Namespace).Get(name.Name)
	if err != nil {
		return nil, notFound
	}
	v, ok := p.value(pod, info.Metric)
	if !ok {
		return nil, notFound
	}
	return &v, nil
}

// GetMetricBySelector returns the metric of every pod of namespace ("" for
// all) that selector matches and that has the metric.
func (p *podAnnotations) GetMetricBySelector(_ context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	notFound := provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	if !p.serves(info, metricSelector) {
		return nil, notFound
	}
	pods, err := p.pods.Pods(namespace).List(selector)
	if err != nil {
		return nil, err
	}
	sort.Slice(pods, func(i, j int) bool {
		if pods[i].Namespace != pods[j].Namespace {
			return pods[i].Namespace < pods[j].Namespace
		}
		return pods[i].Name < pods[j].Name
	})
	out := &custom_metrics.MetricValueList{}
	for _, pod := range pods {
		if v, ok := p.value(pod, info.Metric); ok {
			out.Items = append(out.Items, v)
		}
	}
	if len(out.Items) == 0 {
		return nil, notFound
	}
	return out, nil
}

// ListAllMetrics lists the metrics the pods' annotations name now.
func (p *podAnnotations) ListAllMetrics() []provider.CustomMetricInfo {
	pods, err := p.pods.List(labels.Everything())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for _, pod := range pods {
		for k := range pod.Annotations {
			if m, ok := strings.CutPrefix(k, AnnotationPrefix); ok && m != "" {
				seen[m] = true
			}
		}
	}
	out := make([]provider.CustomMetricInfo, 0, len(seen))
	for m := range seen {
		out = append(out, provider.CustomMetricInfo{GroupResource: podsResource, Namespaced: true, Metric: m})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metric < out[j].Metric })
	return out
}

// serves says whether the request is for a pods metric whose (absent)
// labels the metric selector accepts.
func (p *podAnnotations) serves(info provider.CustomMetricInfo, metricSelector labels.Selector) bool {
	return info.GroupResource == podsResource && info.Metric != "" &&
		(metricSelector == nil || metricSelector.Matches(labels.Set(nil)))
}

// value is the pod's metric, when it has one: a running pod, not being
// deleted, whose annotation parses as a quantity (like kwok's usage, only
// running pods report).
func (p *podAnnotations) value(pod *corev1.Pod, metric string) (custom_metrics.MetricValue, bool) {
	raw, ok := pod.Annotations[AnnotationPrefix+metric]
	if !ok || pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return custom_metrics.MetricValue{}, false
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(raw))
	if err != nil {
		klog.V(2).InfoS("Ignoring a metric annotation that is not a quantity", "pod", klog.KObj(pod), "metric", metric, "value", raw, "err", err)
		return custom_metrics.MetricValue{}, false
	}
	window := windowSeconds
	return custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name,
		},
		Metric:        custom_metrics.MetricIdentifier{Name: metric},
		Timestamp:     metav1.NewTime(p.now()),
		WindowSeconds: &window,
		Value:         q,
	}, true
}
