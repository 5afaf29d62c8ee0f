package podautoscaler

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var errRead = errors.New("something went wrong")

// badSelector does not convert to a labels.Selector.
var badSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Cheddar"}}}

const badSelectorError = `"Cheddar" is not a valid label selector operator`

func metricInputFor(data MetricData, pods []Pod) metricInput {
	calc := testingCalculator(nil)
	return metricInput{calc: &calc, namespace: "test-namespace", specReplicas: 3, statusReplicas: 3, pods: pods, data: data}
}

// TestMetricFailures checks the condition reason, the condition and event
// message (cause) and the reported error of each way a metric fails, as
// upstream words them.
func TestMetricFailures(t *testing.T) {
	t.Parallel()
	memoryValue := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}}}
	containerCPU := autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
		Name: corev1.ResourceCPU, Container: "app", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}
	noTarget := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU}}
	podsBadSelector := podsQPS("10")
	podsBadSelector.Pods.Metric.Selector = badSelector
	objectAverage := objectQPS("15")
	objectAverage.Object.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("5"))}
	objectNoTarget := objectQPS("15")
	objectNoTarget.Object.Target.Type = autoscalingv2.AverageValueMetricType
	objectBadSelector := objectQPS("15")
	objectBadSelector.Object.Metric.Selector = badSelector
	externalAverage := externalQPS(100)
	externalAverage.External.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))}
	externalBadSelector := externalAverage.DeepCopy()
	externalBadSelector.External.Metric.Selector = badSelector
	externalNoTarget := externalQPS(100)
	externalNoTarget.External.Target.Value = nil
	sel := "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"

	cases := []struct {
		name       string
		spec       autoscalingv2.MetricSpec
		data       MetricData
		noPods     bool
		wantReason string
		wantCause  string
		wantErr    string
	}{
		{
			name: "resource utilization: read error", spec: cpuUtilization(50), data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetResourceMetric,
			wantCause:  "failed to get cpu utilization: unable to get metrics for resource cpu: something went wrong",
			wantErr:    "failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: something went wrong",
		},
		{
			name: "resource utilization: no pods", spec: cpuUtilization(50), data: MetricData{PodMetrics: podSamples(1)}, noPods: true,
			wantReason: ReasonFailedGetResourceMetric,
			wantCause:  "failed to get cpu utilization: no pods returned by selector while calculating replica count",
			wantErr:    "failed to get cpu resource metric value: failed to get cpu utilization: no pods returned by selector while calculating replica count",
		},
		{
			name: "resource utilization: missing request", spec: cpuUtilization(50), data: MetricData{PodMetrics: podSamples(1, 1, 1)},
			wantReason: ReasonFailedGetResourceMetric,
			wantCause:  "failed to get cpu utilization: missing request for cpu in container container1 of Pod test-pod-0",
			wantErr:    "failed to get cpu resource metric value: failed to get cpu utilization: missing request for cpu in container container1 of Pod test-pod-0",
		},
		{
			name: "resource average value: read error", spec: memoryValue, data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetResourceMetric,
			wantCause:  "failed to get memory usage: unable to get metrics for resource memory: something went wrong",
			wantErr:    "failed to get memory resource metric value: failed to get memory usage: unable to get metrics for resource memory: something went wrong",
		},
		{
			name: "resource without target", spec: noTarget,
			wantReason: ReasonFailedGetResourceMetric,
			wantCause:  "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set",
			wantErr:    "failed to get cpu resource metric value: invalid resource metric source: neither an average utilization target nor an average value (usage) target was set",
		},
		{
			name: "container resource: read error", spec: containerCPU, data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetContainerResourceMetric,
			wantCause:  "failed to get cpu utilization: unable to get metrics for resource cpu: something went wrong",
			wantErr:    "failed to get app container metric value: failed to get cpu utilization: unable to get metrics for resource cpu: something went wrong",
		},
		{
			name: "pods: read error", spec: podsQPS("10"), data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetPodsMetric,
			wantCause:  "unable to get metric qps: something went wrong",
			wantErr:    "failed to get pods metric value: unable to get metric qps: something went wrong",
		},
		{
			name: "pods: only unready samples", spec: podsQPS("10"), data: MetricData{PodMetrics: PodMetrics{}},
			wantReason: ReasonFailedGetPodsMetric,
			wantCause:  "did not receive metrics for targeted pods (pods might be unready)",
			wantErr:    "failed to get pods metric value: did not receive metrics for targeted pods (pods might be unready)",
		},
		{
			name: "pods: bad selector", spec: podsBadSelector,
			wantReason: ReasonFailedGetPodsMetric, wantCause: badSelectorError, wantErr: "failed to get pods metric value: " + badSelectorError,
		},
		{
			name: "object value: read error", spec: objectQPS("15"), data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetObjectMetric,
			wantCause:  "unable to get metric qps: something went wrong on Deployment test-namespace/some-deployment",
			wantErr:    "failed to get object metric value: unable to get metric qps: something went wrong on Deployment test-namespace/some-deployment",
		},
		{
			name: "object value: no pods", spec: objectQPS("15"), data: MetricData{Value: 30000}, noPods: true,
			wantReason: ReasonFailedGetObjectMetric,
			wantCause:  "unable to calculate ready pods: no pods returned by selector while calculating replica count",
			wantErr:    "failed to get object metric value: unable to calculate ready pods: no pods returned by selector while calculating replica count",
		},
		{
			name: "object average value: read error", spec: objectAverage, data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetObjectMetric,
			wantCause:  "unable to get metric qps: something went wrong on Deployment test-namespace/some-deployment",
			wantErr:    "failed to get object metric value: failed to get qps object metric: unable to get metric qps: something went wrong on Deployment test-namespace/some-deployment",
		},
		{
			// The target type must match the target set.
			name: "object: target type without its value", spec: objectNoTarget,
			wantReason: ReasonFailedGetObjectMetric,
			wantCause:  "invalid object metric source: neither a value target nor an average value target was set",
			wantErr:    "failed to get object metric value: invalid object metric source: neither a value target nor an average value target was set",
		},
		{
			name: "object: bad selector", spec: objectBadSelector,
			wantReason: ReasonFailedGetObjectMetric, wantCause: badSelectorError, wantErr: "failed to get object metric value: " + badSelectorError,
		},
		{
			name: "external value: read error", spec: externalQPS(100), data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetExternalMetric,
			wantCause:  "unable to get external metric test-namespace/qps/" + sel + ": something went wrong",
			wantErr:    "failed to get qps external metric value: failed to get external metric qps: unable to get external metric test-namespace/qps/" + sel + ": something went wrong",
		},
		{
			name: "external value: no pods", spec: externalQPS(100), data: MetricData{Values: []int64{1000}}, noPods: true,
			wantReason: ReasonFailedGetExternalMetric,
			wantCause:  "unable to calculate ready pods: no pods returned by selector while calculating replica count",
			wantErr:    "failed to get qps external metric value: failed to get external metric qps: unable to calculate ready pods: no pods returned by selector while calculating replica count",
		},
		{
			name: "external average value: read error", spec: externalAverage, data: MetricData{Err: errRead},
			wantReason: ReasonFailedGetExternalMetric,
			wantCause:  "unable to get external metric test-namespace/qps/" + sel + ": something went wrong",
			wantErr:    "failed to get qps external metric value: failed to get qps external metric: unable to get external metric test-namespace/qps/" + sel + ": something went wrong",
		},
		{
			name: "external average value: bad selector", spec: *externalBadSelector,
			wantReason: ReasonFailedGetExternalMetric, wantCause: badSelectorError,
			wantErr: "failed to get qps external metric value: failed to get qps external metric: " + badSelectorError,
		},
		{
			name: "external without target", spec: externalNoTarget,
			wantReason: ReasonFailedGetExternalMetric,
			wantCause:  "invalid external metric source: neither a value target nor an average value target was set",
			wantErr:    "failed to get qps external metric value: invalid external metric source: neither a value target nor an average value target was set",
		},
		{
			name: "unknown type", spec: cheddar,
			wantReason: ReasonInvalidMetricSourceType, wantCause: `unknown metric source type "CheddarCheese"`, wantErr: `unknown metric source type "CheddarCheese"`,
		},
		{
			name: "type without its source", spec: autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType},
			wantReason: ReasonFailedGetPodsMetric,
			wantCause:  "invalid metric source: type Pods without its source", wantErr: "invalid metric source: type Pods without its source",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pods := podSet{n: 3}.build()
			if tc.noPods {
				pods = nil
			}
			_, failure := computeMetric(tc.spec, metricInputFor(tc.data, pods))
			if failure == nil {
				t.Fatal("the metric did not fail")
			}
			got := []string{failure.reason, failure.cause.Error(), failure.err.Error()}
			if diff := cmp.Diff([]string{tc.wantReason, tc.wantCause, tc.wantErr}, got); diff != "" {
				t.Errorf("reason, cause, error (-want +got):\n%s", diff)
			}
			if c := failure.condition(); c.Message != "the HPA was unable to compute the replica count: "+tc.wantCause ||
				c.Type != autoscalingv2.ScalingActive || c.Status != corev1.ConditionFalse || c.Reason != tc.wantReason {
				t.Errorf("condition = %+v", c)
			}
		})
	}
}

// TestMetricStatuses checks the status, name and proposal of each metric
// type and target.
func TestMetricStatuses(t *testing.T) {
	t.Parallel()
	milli := func(m int64) *resource.Quantity { return resource.NewMilliQuantity(m, resource.DecimalSI) }
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}
	selString := "&LabelSelector{MatchLabels:map[string]string{queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}"
	deployment := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "some-deployment"}
	pods3 := func(resourceName corev1.ResourceName, request int64) []Pod {
		return podSet{n: 3, resource: resourceName, requests: []int64{request, request, request}}.build()
	}
	mib := int64(1024 * 1024 * 1000) // 1Mi in milli-units
	cases := []struct {
		name         string
		spec         autoscalingv2.MetricSpec
		data         MetricData
		pods         []Pod
		wantReplicas int32
		wantName     string
		want         autoscalingv2.MetricStatus
		wantString   string // the current quantity, formatted
	}{
		{
			// 2 containers of 1000m use 2*300m each: 30%.
			name: "resource utilization", spec: cpuUtilization(60), pods: pods3(corev1.ResourceCPU, 1000),
			data:         MetricData{PodMetrics: podSamples(600, 600, 600)},
			wantReplicas: 2, wantName: "cpu resource utilization (percentage of request)",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](30), AverageValue: milli(600)}}},
			wantString: "600m",
		},
		{
			name: "memory average value in binary units",
			spec: autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Mi"))}}},
			pods:         pods3(corev1.ResourceMemory, 0),
			data:         MetricData{PodMetrics: podSamples(2*mib, 2*mib, 2*mib)},
			wantReplicas: 6, wantName: "memory resource",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceMemory, Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(2*mib, resource.BinarySI)}}},
			wantString: "2Mi",
		},
		{
			// The container's request only: 300m of 1000m = 30%.
			name: "container resource utilization",
			spec: autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name: corev1.ResourceCPU, Container: "container2", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
			pods:         pods3(corev1.ResourceCPU, 1000),
			data:         MetricData{PodMetrics: podSamples(300, 300, 300)},
			wantReplicas: 2, wantName: "cpu container resource utilization (percentage of request)",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{
				Name: corev1.ResourceCPU, Container: "container2", Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr.To[int32](30), AverageValue: milli(300)}}},
			wantString: "300m",
		},
		{
			name: "container resource average value",
			spec: autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name: corev1.ResourceCPU, Container: "container2", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("100m"))}}},
			pods:         pods3(corev1.ResourceCPU, 1000),
			data:         MetricData{PodMetrics: podSamples(300, 300, 300)},
			wantReplicas: 9, wantName: "cpu resource",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{
				Name: corev1.ResourceCPU, Container: "container2", Current: autoscalingv2.MetricValueStatus{AverageValue: milli(300)}}},
			wantString: "300m",
		},
		{
			name: "pods", spec: podsQPS("10"), pods: pods3(corev1.ResourceCPU, 0),
			data:         MetricData{PodMetrics: podSamples(15000, 15000, 15000)},
			wantReplicas: 5, wantName: "pods metric qps",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Current: autoscalingv2.MetricValueStatus{AverageValue: milli(15000)}}},
			wantString: "15",
		},
		{
			name: "object value", spec: objectQPS("15"), pods: pods3(corev1.ResourceCPU, 0),
			data:         MetricData{Value: 30000},
			wantReplicas: 6, wantName: "Deployment metric qps",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
				DescribedObject: deployment, Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Current: autoscalingv2.MetricValueStatus{Value: milli(30000)}}},
			wantString: "30",
		},
		{
			// 20 over 3 existing pods: 6667m each; 20/5 = 4 replicas.
			name: "object average value",
			spec: autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: deployment, Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: sel},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("5"))}}},
			data:         MetricData{Value: 20000, Timestamp: testNow},
			wantReplicas: 4, wantName: "external metric qps(" + selString + ")",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricStatus{
				DescribedObject: deployment, Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: sel},
				Current: autoscalingv2.MetricValueStatus{AverageValue: milli(6667)}}},
			wantString: "6667m",
		},
		{
			name: "external value", spec: externalQPS(1000), pods: pods3(corev1.ResourceCPU, 0),
			data:         MetricData{Values: []int64{1000, 1000}},
			wantReplicas: 6, wantName: "external metric qps(&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},})",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: emptySelector}, Current: autoscalingv2.MetricValueStatus{Value: milli(2000)}}},
			wantString: "2",
		},
		{
			// The AverageValue target wins whatever the target type says.
			name: "external average value",
			spec: autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: sel},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: milli(1), AverageValue: milli(1000)}}},
			data:         MetricData{Values: []int64{4500}},
			wantReplicas: 5, wantName: "external metric qps(" + selString + ")",
			want: autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricStatus{
				Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: sel}, Current: autoscalingv2.MetricValueStatus{AverageValue: milli(1500)}}},
			wantString: "1500m",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, failure := computeMetric(tc.spec, metricInputFor(tc.data, tc.pods))
			if failure != nil {
				t.Fatalf("unexpected failure: %v", failure.err)
			}
			if p.replicas != tc.wantReplicas || p.name != tc.wantName {
				t.Errorf("got %d replicas from %q, want %d from %q", p.replicas, p.name, tc.wantReplicas, tc.wantName)
			}
			if diff := cmp.Diff(tc.want, p.status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if got := currentQuantity(p.status).String(); got != tc.wantString {
				t.Errorf("current = %s, want %s", got, tc.wantString)
			}
		})
	}
}

// currentQuantity returns the main current value of a metric status.
func currentQuantity(s autoscalingv2.MetricStatus) *resource.Quantity {
	var v autoscalingv2.MetricValueStatus
	switch {
	case s.Resource != nil:
		v = s.Resource.Current
	case s.ContainerResource != nil:
		v = s.ContainerResource.Current
	case s.Pods != nil:
		v = s.Pods.Current
	case s.Object != nil:
		v = s.Object.Current
	case s.External != nil:
		v = s.External.Current
	}
	if v.Value != nil {
		return v.Value
	}
	return v.AverageValue
}
