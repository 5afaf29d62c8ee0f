package podautoscaler

import (
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MetricData is what the controller read for one entry of spec.metrics.
// Only the fields of the entry's type are used.
type MetricData struct {
	// Err is the error of the read, if it failed. The algorithm wraps it as
	// upstream does (e.g. "unable to get metrics for resource cpu: <Err>").
	// A read that returned no items at all is an error too, as upstream's
	// metrics client has it ("no metrics returned from resource metrics
	// API", "... from custom metrics API", "... from external metrics API").
	Err error
	// PodMetrics are the samples of a Resource metric (the pod's usage
	// summed over its containers, for pods that report every container),
	// a ContainerResource metric (the named container's usage) or a Pods
	// metric.
	PodMetrics PodMetrics
	// Value is the value of an Object metric.
	Value int64
	// Values are the values of the series of an External metric; they are
	// summed.
	Values []int64
	// Timestamp is the timestamp of an Object or External read.
	Timestamp time.Time
}

// metricProposal is the replica count one metric asks for.
type metricProposal struct {
	replicas int32
	// name describes the metric in the rescale reason and conditions.
	name      string
	timestamp time.Time
	status    autoscalingv2.MetricStatus
}

// metricFailure is a metric that yielded no proposal.
type metricFailure struct {
	// reason is the reason of the ScalingActive condition and the event.
	reason string
	// cause is the message of the event and, after "the HPA was unable to
	// compute the replica count: ", of the condition.
	cause error
	// err is the error reported for the metric.
	err error
}

func (f *metricFailure) condition() autoscalingv2.HorizontalPodAutoscalerCondition {
	return autoscalingv2.HorizontalPodAutoscalerCondition{
		Type:    autoscalingv2.ScalingActive,
		Status:  corev1.ConditionFalse,
		Reason:  f.reason,
		Message: fmt.Sprintf("the HPA was unable to compute the replica count: %v", f.cause),
	}
}

// metricInput is what one metric is computed from.
type metricInput struct {
	calc           *ReplicaCalculator
	namespace      string
	specReplicas   int32
	statusReplicas int32
	pods           []Pod
	data           MetricData
}

// computeMetric computes the proposal of one metric of the spec.
func computeMetric(spec autoscalingv2.MetricSpec, in metricInput) (metricProposal, *metricFailure) {
	switch spec.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			return missingSource(spec.Type, ReasonFailedGetResourceMetric)
		}
		return computeResourceMetric(spec.Resource, in)
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			return missingSource(spec.Type, ReasonFailedGetContainerResourceMetric)
		}
		return computeContainerResourceMetric(spec.ContainerResource, in)
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			return missingSource(spec.Type, ReasonFailedGetPodsMetric)
		}
		return computePodsMetric(spec.Pods, in)
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			return missingSource(spec.Type, ReasonFailedGetObjectMetric)
		}
		return computeObjectMetric(spec.Object, in)
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			return missingSource(spec.Type, ReasonFailedGetExternalMetric)
		}
		return computeExternalMetric(spec.External, in)
	}
	// API validation rejects other types.
	err := fmt.Errorf("unknown metric source type %q", string(spec.Type))
	return metricProposal{}, &metricFailure{reason: ReasonInvalidMetricSourceType, cause: err, err: err}
}

// missingSource fails a metric whose source field is unset, which API
// validation rejects (upstream would dereference nil).
func missingSource(t autoscalingv2.MetricSourceType, reason string) (metricProposal, *metricFailure) {
	err := fmt.Errorf("invalid metric source: type %s without its source", t)
	return metricProposal{}, &metricFailure{reason: reason, cause: err, err: err}
}

func computeResourceMetric(src *autoscalingv2.ResourceMetricSource, in metricInput) (metricProposal, *metricFailure) {
	p, err := computeResourceValue(src.Name, "", src.Target, in)
	if err != nil {
		return metricProposal{}, &metricFailure{reason: ReasonFailedGetResourceMetric, cause: err,
			err: fmt.Errorf("failed to get %s resource metric value: %v", src.Name, err)}
	}
	p.status = autoscalingv2.MetricStatus{
		Type:     autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricStatus{Name: src.Name, Current: p.current},
	}
	return p.metricProposal, nil
}

func computeContainerResourceMetric(src *autoscalingv2.ContainerResourceMetricSource, in metricInput) (metricProposal, *metricFailure) {
	p, err := computeResourceValue(src.Name, src.Container, src.Target, in)
	if err != nil {
		return metricProposal{}, &metricFailure{reason: ReasonFailedGetContainerResourceMetric, cause: err,
			err: fmt.Errorf("failed to get %s container metric value: %v", src.Container, err)}
	}
	p.status = autoscalingv2.MetricStatus{
		Type: autoscalingv2.ContainerResourceMetricSourceType,
		ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{
			Name: src.Name, Container: src.Container, Current: p.current,
		},
	}
	return p.metricProposal, nil
}

// resourceProposal is a resource metric's proposal before its status type
// is known.
type resourceProposal struct {
	metricProposal
	current autoscalingv2.MetricValueStatus
}

// computeResourceValue computes a Resource or ContainerResource metric
// (container set). An AverageValue target wins over a utilization target.
func computeResourceValue(name corev1.ResourceName, container string, target autoscalingv2.MetricTarget, in metricInput) (resourceProposal, error) {
	if target.AverageValue != nil {
		p, err := resourceAverageValue(name, target.AverageValue.MilliValue(), in)
		if err != nil {
			return resourceProposal{}, fmt.Errorf("failed to get %s usage: %v", name, err)
		}
		average := milliQuantity(name, p.Value)
		return resourceProposal{
			metricProposal: metricProposal{replicas: p.Replicas, name: fmt.Sprintf("%s resource", name), timestamp: p.Timestamp},
			current:        autoscalingv2.MetricValueStatus{AverageValue: &average},
		}, nil
	}
	if target.AverageUtilization == nil {
		return resourceProposal{}, errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}
	p, err := resourceUtilization(name, container, *target.AverageUtilization, in)
	if err != nil {
		return resourceProposal{}, fmt.Errorf("failed to get %s utilization: %v", name, err)
	}
	metricName := fmt.Sprintf("%s resource utilization (percentage of request)", name)
	if container != "" {
		metricName = fmt.Sprintf("%s container resource utilization (percentage of request)", name)
	}
	average := milliQuantity(name, p.AverageValue)
	return resourceProposal{
		metricProposal: metricProposal{replicas: p.Replicas, name: metricName, timestamp: p.Timestamp},
		current:        autoscalingv2.MetricValueStatus{AverageUtilization: &p.Utilization, AverageValue: &average},
	}, nil
}

func resourceAverageValue(name corev1.ResourceName, target int64, in metricInput) (ValueProposal, error) {
	if in.data.Err != nil {
		return ValueProposal{}, fmt.Errorf("unable to get metrics for resource %s: %v", name, in.data.Err)
	}
	return in.calc.ResourceAverageValue(in.specReplicas, target, name, in.pods, in.data.PodMetrics)
}

func resourceUtilization(name corev1.ResourceName, container string, target int32, in metricInput) (UtilizationProposal, error) {
	if in.data.Err != nil {
		return UtilizationProposal{}, fmt.Errorf("unable to get metrics for resource %s: %v", name, in.data.Err)
	}
	return in.calc.ResourceUtilization(in.specReplicas, target, name, container, in.pods, in.data.PodMetrics)
}

// milliQuantity formats a resource value as the metrics server does:
// memory in binary units, everything else in decimal ones.
func milliQuantity(name corev1.ResourceName, milli int64) resource.Quantity {
	format := resource.DecimalSI
	if name == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(milli, format)
}

func computePodsMetric(src *autoscalingv2.PodsMetricSource, in metricInput) (metricProposal, *metricFailure) {
	fail := func(cause error) (metricProposal, *metricFailure) {
		return metricProposal{}, &metricFailure{reason: ReasonFailedGetPodsMetric, cause: cause,
			err: fmt.Errorf("failed to get pods metric value: %v", cause)}
	}
	if _, err := metav1.LabelSelectorAsSelector(src.Metric.Selector); err != nil {
		return fail(err)
	}
	if src.Target.AverageValue == nil {
		// API validation requires it (upstream would dereference nil).
		return fail(errors.New("invalid pods metric source: no average value target was set"))
	}
	if in.data.Err != nil {
		return fail(fmt.Errorf("unable to get metric %s: %v", src.Metric.Name, in.data.Err))
	}
	p, err := in.calc.PodsAverageValue(in.specReplicas, src.Target.AverageValue.MilliValue(), in.pods, in.data.PodMetrics)
	if err != nil {
		return fail(err)
	}
	return metricProposal{
		replicas:  p.Replicas,
		name:      fmt.Sprintf("pods metric %s", src.Metric.Name),
		timestamp: p.Timestamp,
		status: autoscalingv2.MetricStatus{
			Type: autoscalingv2.PodsMetricSourceType,
			Pods: &autoscalingv2.PodsMetricStatus{
				Metric:  identifier(src.Metric),
				Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(p.Value, resource.DecimalSI)},
			},
		},
	}, nil
}

func computeObjectMetric(src *autoscalingv2.ObjectMetricSource, in metricInput) (metricProposal, *metricFailure) {
	fail := func(cause, err error) (metricProposal, *metricFailure) {
		return metricProposal{}, &metricFailure{reason: ReasonFailedGetObjectMetric, cause: cause,
			err: fmt.Errorf("failed to get object metric value: %v", err)}
	}
	if _, err := metav1.LabelSelectorAsSelector(src.Metric.Selector); err != nil {
		return fail(err, err)
	}
	var readErr error
	if in.data.Err != nil {
		readErr = fmt.Errorf("unable to get metric %s: %v on %s %s/%s", src.Metric.Name, in.data.Err,
			src.DescribedObject.Kind, in.namespace, src.DescribedObject.Name)
	}
	status := autoscalingv2.MetricStatus{
		Type:   autoscalingv2.ObjectMetricSourceType,
		Object: &autoscalingv2.ObjectMetricStatus{DescribedObject: src.DescribedObject, Metric: identifier(src.Metric)},
	}
	target := src.Target
	switch {
	case target.Type == autoscalingv2.ValueMetricType && target.Value != nil:
		if readErr != nil {
			return fail(readErr, readErr)
		}
		p, err := in.calc.ObjectValue(in.specReplicas, target.Value.MilliValue(), in.data.Value, in.pods)
		if err != nil {
			return fail(err, err)
		}
		status.Object.Current.Value = resource.NewMilliQuantity(p.Value, resource.DecimalSI)
		return metricProposal{replicas: p.Replicas, name: fmt.Sprintf("%s metric %s", src.DescribedObject.Kind, src.Metric.Name),
			timestamp: p.Timestamp, status: status}, nil
	case target.Type == autoscalingv2.AverageValueMetricType && target.AverageValue != nil:
		if readErr != nil {
			return fail(readErr, fmt.Errorf("failed to get %s object metric: %v", src.Metric.Name, readErr))
		}
		p := in.calc.ObjectAverageValue(in.statusReplicas, target.AverageValue.MilliValue(), in.data.Value, in.data.Timestamp)
		status.Object.Current.AverageValue = resource.NewMilliQuantity(p.Value, resource.DecimalSI)
		// Upstream names this metric "external metric"; kept for identical
		// rescale reasons.
		return metricProposal{replicas: p.Replicas, name: fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector),
			timestamp: p.Timestamp, status: status}, nil
	}
	err := errors.New("invalid object metric source: neither a value target nor an average value target was set")
	return fail(err, err)
}

func computeExternalMetric(src *autoscalingv2.ExternalMetricSource, in metricInput) (metricProposal, *metricFailure) {
	fail := func(cause, err error) (metricProposal, *metricFailure) {
		return metricProposal{}, &metricFailure{reason: ReasonFailedGetExternalMetric, cause: cause,
			err: fmt.Errorf("failed to get %s external metric value: %v", src.Metric.Name, err)}
	}
	target := src.Target
	switch {
	case target.AverageValue != nil:
		if err := externalReadError(src, in); err != nil {
			return fail(err, fmt.Errorf("failed to get %s external metric: %v", src.Metric.Name, err))
		}
		p := in.calc.ExternalAverageValue(in.statusReplicas, target.AverageValue.MilliValue(), in.data.Values, in.data.Timestamp)
		return externalProposal(src, p, autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(p.Value, resource.DecimalSI)}), nil
	case target.Value != nil:
		p, err := externalValue(src, target.Value.MilliValue(), in)
		if err != nil {
			return fail(err, fmt.Errorf("failed to get external metric %s: %v", src.Metric.Name, err))
		}
		return externalProposal(src, p, autoscalingv2.MetricValueStatus{Value: resource.NewMilliQuantity(p.Value, resource.DecimalSI)}), nil
	}
	err := errors.New("invalid external metric source: neither a value target nor an average value target was set")
	return fail(err, err)
}

// externalReadError returns why the values of an External metric cannot be
// used: its selector does not convert, or the read failed.
func externalReadError(src *autoscalingv2.ExternalMetricSource, in metricInput) error {
	if _, err := metav1.LabelSelectorAsSelector(src.Metric.Selector); err != nil {
		return err
	}
	if in.data.Err != nil {
		return fmt.Errorf("unable to get external metric %s/%s/%+v: %s", in.namespace, src.Metric.Name, src.Metric.Selector, in.data.Err)
	}
	return nil
}

func externalValue(src *autoscalingv2.ExternalMetricSource, target int64, in metricInput) (ValueProposal, error) {
	if err := externalReadError(src, in); err != nil {
		return ValueProposal{}, err
	}
	return in.calc.ExternalValue(in.specReplicas, target, in.data.Values, in.pods)
}

func externalProposal(src *autoscalingv2.ExternalMetricSource, p ValueProposal, current autoscalingv2.MetricValueStatus) metricProposal {
	return metricProposal{
		replicas:  p.Replicas,
		name:      fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector),
		timestamp: p.Timestamp,
		status: autoscalingv2.MetricStatus{
			Type:     autoscalingv2.ExternalMetricSourceType,
			External: &autoscalingv2.ExternalMetricStatus{Metric: identifier(src.Metric), Current: current},
		},
	}
}

func identifier(m autoscalingv2.MetricIdentifier) autoscalingv2.MetricIdentifier {
	return autoscalingv2.MetricIdentifier{Name: m.Name, Selector: m.Selector}
}
