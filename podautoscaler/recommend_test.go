package podautoscaler

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

func cpuUtilization(target int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(target)}},
	}
}

var cheddar = autoscalingv2.MetricSpec{Type: "CheddarCheese"}

func podsQPS(averageValue string) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse(averageValue))}},
	}
}

func objectQPS(value string) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ObjectMetricSourceType,
		Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "some-deployment"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "qps"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resource.MustParse(value))},
		},
	}
}

var emptySelector = &metav1.LabelSelector{}

func externalQPS(milli int64) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ExternalMetricSourceType,
		External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: emptySelector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewMilliQuantity(milli, resource.DecimalSI)},
		},
	}
}

// cpuPods returns ready pods with one container requesting requests[i]
// and samples of levels[i] (upstream's horizontal_test harness).
func cpuPods(levels, requests []int64) ([]Pod, PodMetrics) {
	pods := make([]Pod, len(requests))
	for i := range pods {
		pods[i] = Pod{Cluster: testCluster, Namespace: "test-namespace", Name: podName(i),
			Phase: running, Ready: T, StartTime: cool,
			Containers: []Container{{Name: "container1", Requests: map[corev1.ResourceName]int64{corev1.ResourceCPU: requests[i]}}}}
	}
	samples := PodMetrics{}
	for i, l := range levels {
		samples[podKey(i)] = PodMetric{Window: time.Minute, Value: l}
	}
	return pods, samples
}

// scenario is one Recommend call with upstream's horizontal_test defaults:
// a CPU metric over 3 pods requesting 1 CPU each.
type scenario struct {
	min, max          int32
	current, status   int32
	behavior          *autoscalingv2.HorizontalPodAutoscalerBehavior
	metrics           []autoscalingv2.MetricSpec
	data              []MetricData
	pods              []Pod
	history           *History
	selector          string
	autoscalers       []string
	previousDesired   int32
	initialConditions []autoscalingv2.HorizontalPodAutoscalerCondition
}

func (s scenario) run() (Recommendation, *History) {
	h := s.history
	if h == nil {
		h = &History{recommendations: []timestampedRecommendation{}}
	}
	if s.status == 0 {
		s.status = s.current
	}
	selector := "name=test-pod"
	if s.selector != "" {
		selector = s.selector
	}
	if s.selector == "-" {
		selector = ""
	}
	if s.autoscalers == nil {
		s.autoscalers = []string{"test-namespace/fhpa"}
	}
	in := Input{
		Namespace: "test-namespace",
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			MinReplicas: ptr.To(s.min), MaxReplicas: s.max, Metrics: s.metrics, Behavior: s.behavior,
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			CurrentReplicas: s.current, DesiredReplicas: s.previousDesired, Conditions: s.initialConditions,
			ObservedGeneration: ptr.To[int64](7),
		},
		CurrentReplicas:          s.current,
		StatusReplicas:           s.status,
		Selector:                 selector,
		AutoscalersSelectingPods: s.autoscalers,
		Pods:                     s.pods,
		Metrics:                  s.data,
	}
	return testingConfig().Recommend(in, h, testNow), h
}

type cond struct {
	Type    autoscalingv2.HorizontalPodAutoscalerConditionType
	Status  corev1.ConditionStatus
	Reason  string
	Message string // checked when set
}

func checkConditions(t *testing.T, got []autoscalingv2.HorizontalPodAutoscalerCondition, want []cond) {
	t.Helper()
	var gotConds []cond
	for i, c := range got {
		g := cond{Type: c.Type, Status: c.Status, Reason: c.Reason}
		if i < len(want) && want[i].Message != "" {
			g.Message = c.Message
		}
		gotConds = append(gotConds, g)
	}
	if diff := cmp.Diff(want, gotConds); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
}

func eventReasons(events []Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type+" "+e.Reason)
	}
	return out
}

var (
	gotScale      = cond{Type: autoscalingv2.AbleToScale, Status: T, Reason: ReasonSucceededGetScale}
	readyForScale = cond{Type: autoscalingv2.AbleToScale, Status: T, Reason: ReasonReadyForNewScale}
	validMetric   = cond{Type: autoscalingv2.ScalingActive, Status: T, Reason: ReasonValidMetricFound}
	withinRange   = cond{Type: autoscalingv2.ScalingLimited, Status: F, Reason: ReasonDesiredWithinRange}
)

// TestRecommend ports the scenarios of upstream's horizontal_test.go that
// exercise the algorithm (not the API calls).
func TestRecommend(t *testing.T) {
	t.Parallel()
	threePods := func(levels ...int64) ([]Pod, []MetricData) {
		pods, samples := cpuPods(levels, []int64{1000, 1000, 1000})
		return pods, []MetricData{{PodMetrics: samples}}
	}
	fivePods := func(levels ...int64) ([]Pod, []MetricData) {
		pods, samples := cpuPods(levels, repeat[int64](1000, 5))
		return pods, []MetricData{{PodMetrics: samples}}
	}
	cases := []struct {
		name  string
		s     scenario
		setup func(*scenario)

		wantDesired    int32
		wantRescale    bool
		wantReason     string
		wantConditions []cond
		wantEvents     []string
		wantErr        string
		wantMetrics    int // number of non-empty metric statuses
	}{
		{
			// 50% for a 30% target: ceil(5/3*3) = 5.
			name: "scale up",
			s:    scenario{min: 2, max: 6, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(30)}},
			setup: func(s *scenario) {
				s.pods, s.data = threePods(300, 500, 700)
			},
			wantDesired: 5, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale,
				{Type: autoscalingv2.ScalingActive, Status: T, Reason: ReasonValidMetricFound,
					Message: "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"},
				{Type: autoscalingv2.ScalingLimited, Status: F, Reason: ReasonDesiredWithinRange, Message: "the desired count is within the acceptable range"}},
			wantMetrics: 1,
		},
		{
			name: "scale down",
			s:    scenario{min: 2, max: 6, current: 5, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
			setup: func(s *scenario) {
				s.pods, s.data = fivePods(100, 300, 500, 250, 250)
			},
			wantDesired: 3, wantRescale: true, wantReason: "All metrics below target",
			wantConditions: []cond{readyForScale, validMetric, withinRange}, wantMetrics: 1,
		},
		{
			// A new FederatedHPA's history starts with the current count:
			// no scale-down within the first window.
			name: "scale down stabilized on the initial size",
			s:    scenario{min: 2, max: 6, current: 5, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}, history: &History{}},
			setup: func(s *scenario) {
				s.pods, s.data = fivePods(100, 300, 500, 250, 250)
			},
			wantDesired: 5,
			wantConditions: []cond{{Type: autoscalingv2.AbleToScale, Status: T, Reason: ReasonScaleDownStabilized,
				Message: "recent recommendations were higher than current one, applying the highest recent recommendation"}, validMetric, withinRange},
			wantMetrics: 1,
		},
		{
			// 50% of a 100% target proposes 2; a recommendation of 4 a
			// minute ago holds it at 4; one of 10 ten minutes ago expired.
			name: "scale down stabilized by recent recommendations",
			s: scenario{min: 1, max: 5, current: 4, metrics: []autoscalingv2.MetricSpec{cpuUtilization(100)},
				history: &History{recommendations: []timestampedRecommendation{{10, testNow.Add(-10 * time.Minute)}, {4, testNow.Add(-time.Minute)}}}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{50, 50, 50}, []int64{100, 100, 100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired:    4,
			wantConditions: []cond{{Type: autoscalingv2.AbleToScale, Status: T, Reason: ReasonScaleDownStabilized}, validMetric, withinRange},
			wantMetrics:    1,
		},
		{
			name: "scale down with behavior",
			s: scenario{min: 2, max: 6, current: 5, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)},
				behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, 0, 100, 15, 30)}},
			setup: func(s *scenario) {
				s.pods, s.data = fivePods(100, 300, 500, 250, 250)
			},
			wantDesired: 3, wantRescale: true, wantReason: "All metrics below target",
			wantConditions: []cond{readyForScale, validMetric, withinRange}, wantMetrics: 1,
		},
		{
			// 115m of 3000m requested: 3%, ceil(0.03/0.9*3) = 1 < 2.
			name: "minReplicas",
			s:    scenario{min: 2, max: 5, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{10, 95, 10}, []int64{900, 1000, 1100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 2, wantRescale: true, wantReason: "All metrics below target",
			wantConditions: []cond{readyForScale, validMetric,
				{Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonTooFewReplicas, Message: "the desired replica count is less than the minimum replica count"}},
			wantMetrics: 1,
		},
		{
			name: "minReplicas 0 lets the metrics ask for 0",
			s:    scenario{min: 0, max: 5, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{0, 0, 0}, []int64{900, 1000, 1100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 0, wantRescale: true, wantReason: "All metrics below target",
			wantConditions: []cond{readyForScale, validMetric, withinRange}, wantMetrics: 1,
		},
		{
			name: "metrics asking for 0 are bounded by minReplicas",
			s:    scenario{min: 2, max: 5, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{0, 0, 0}, []int64{900, 1000, 1100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 2, wantRescale: true, wantReason: "All metrics below target",
			wantConditions: []cond{readyForScale, validMetric, {Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonTooFewReplicas}},
			wantMetrics:    1,
		},
		{
			// 18500m of 3000m: 616%, ceil(6.84*3) = 21; the scale-up limit
			// is 6, maxReplicas 5.
			name: "maxReplicas",
			s:    scenario{min: 2, max: 5, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{8000, 9500, 1000}, []int64{900, 1000, 1100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 5, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale, validMetric,
				{Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonTooManyReplicas, Message: "the desired replica count is more than the maximum replica count"}},
			wantMetrics: 1,
		},
		{
			// Without behavior a step may at most double (and reach 4).
			name: "scale-up limit without behavior",
			s:    scenario{min: 1, max: 100, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(10)}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{100, 200, 300}, []int64{100, 100, 100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 6, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale, validMetric,
				{Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonScaleUpLimit, Message: "the desired replica count is increasing faster than the maximum scale rate"}},
			wantMetrics: 1,
		},
		{
			// 200% of a 10% target asks for 60; +700% allows 24.
			name: "upscale cap of the behavior",
			s: scenario{min: 1, max: 100, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(10)},
				behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, 0, 700, 60, 0)}, history: &History{}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{100, 200, 300}, []int64{100, 100, 100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 24, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale, validMetric, {Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonScaleUpLimit}},
			wantMetrics:    1,
		},
		{
			name: "upscale cap above maxReplicas",
			s: scenario{min: 1, max: 20, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(10)},
				behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(0, 0, 700, 60, 0)}, history: &History{}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{100, 200, 300}, []int64{100, 100, 100})
				s.pods, s.data = pods, []MetricData{{PodMetrics: samples}}
			},
			wantDesired: 20, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale, validMetric, {Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonTooManyReplicas}},
			wantMetrics:    1,
		},
		{
			// A rolling update surged to 5 pods at 50%: on target, keep 4.
			name: "more pods than replicas does not scale",
			s:    scenario{min: 1, max: 8, current: 4, status: 5, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
			setup: func(s *scenario) {
				s.pods, s.data = fivePods(500, 500, 500, 500, 500)
			},
			wantDesired: 4, wantConditions: []cond{readyForScale, validMetric, withinRange}, wantMetrics: 1,
		},
		{
			name:        "a target scaled to zero disables autoscaling",
			s:           scenario{min: 3, max: 5, current: 0, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			wantDesired: 0,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonScalingDisabled,
				Message: "scaling is disabled since the replica count of the target is zero"}},
		},
		{
			name:           "minReplicas 0 does not scale from zero",
			s:              scenario{min: 0, max: 6, current: 0, metrics: []autoscalingv2.MetricSpec{cpuUtilization(30), cheddar}},
			wantDesired:    0,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonScalingDisabled}},
		},
		{
			name:        "below minReplicas, without reading metrics",
			s:           scenario{min: 3, max: 5, current: 2, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			wantDesired: 3, wantRescale: true, wantReason: "Current number of replicas below Spec.MinReplicas",
			wantConditions: []cond{gotScale},
		},
		{
			name:        "above maxReplicas, without reading metrics",
			s:           scenario{min: 3, max: 5, current: 10, metrics: []autoscalingv2.MetricSpec{cpuUtilization(90)}},
			wantDesired: 5, wantRescale: true, wantReason: "Current number of replicas above Spec.MaxReplicas",
			wantConditions: []cond{gotScale},
		},
		{
			// CPU asks for 4 (40% of 30%): an invalid metric does not stop
			// a scale-up, but is reported.
			name: "scale up with one invalid metric",
			s:    scenario{min: 2, max: 6, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(30), cheddar}},
			setup: func(s *scenario) {
				s.pods, s.data = threePods(300, 400, 500)
			},
			wantDesired: 4, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale, validMetric, withinRange},
			wantEvents:     []string{"Warning InvalidMetricSourceType"},
			wantErr:        `invalid metrics (1 invalid out of 2), first error is: unknown metric source type "CheddarCheese"`,
			wantMetrics:    1,
		},
		{
			name: "no scale down with one invalid metric",
			s:    scenario{min: 2, max: 6, current: 5, previousDesired: 5, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50), cheddar}},
			setup: func(s *scenario) {
				s.pods, s.data = fivePods(100, 300, 500, 250, 250)
			},
			wantDesired: 5,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonInvalidMetricSourceType,
				Message: `the HPA was unable to compute the replica count: unknown metric source type "CheddarCheese"`}},
			wantEvents:  []string{"Warning InvalidMetricSourceType", "Warning FailedComputeMetricsReplicas"},
			wantErr:     `invalid metrics (1 invalid out of 2), first error is: unknown metric source type "CheddarCheese"`,
			wantMetrics: 1,
		},
		{
			name:           "only an invalid metric",
			s:              scenario{min: 2, max: 6, current: 3, previousDesired: 3, metrics: []autoscalingv2.MetricSpec{cheddar}},
			wantDesired:    3,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonInvalidMetricSourceType}},
			wantEvents:     []string{"Warning InvalidMetricSourceType", "Warning FailedComputeMetricsReplicas"},
			wantErr:        `invalid metrics (1 invalid out of 1), first error is: unknown metric source type "CheddarCheese"`,
		},
		{
			name: "scale up with one metric failing to read",
			s:    scenario{min: 2, max: 6, current: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(30), externalQPS(100)}},
			setup: func(s *scenario) {
				s.pods, s.data = threePods(300, 400, 500)
				s.data = append(s.data, MetricData{Err: errors.New("something went wrong")})
			},
			wantDesired: 4, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: []cond{readyForScale, validMetric, withinRange},
			wantEvents:     []string{"Warning FailedGetExternalMetric"},
			wantErr: fmt.Sprintf("invalid metrics (1 invalid out of 2), first error is: failed to get qps external metric value: "+
				"failed to get external metric qps: unable to get external metric test-namespace/qps/%+v: something went wrong", emptySelector),
			wantMetrics: 1,
		},
		{
			name: "no scale down with one metric failing to read",
			s:    scenario{min: 2, max: 6, current: 5, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50), externalQPS(1000)}},
			setup: func(s *scenario) {
				s.pods, s.data = fivePods(100, 300, 500, 250, 250)
				s.data = append(s.data, MetricData{Err: errors.New("something went wrong")})
			},
			wantDesired:    5,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonFailedGetExternalMetric}},
			wantEvents:     []string{"Warning FailedGetExternalMetric", "Warning FailedComputeMetricsReplicas"},
			wantErr: fmt.Sprintf("invalid metrics (1 invalid out of 2), first error is: failed to get qps external metric value: "+
				"failed to get external metric qps: unable to get external metric test-namespace/qps/%+v: something went wrong", emptySelector),
			wantMetrics: 1,
		},
		{
			// The highest proposal wins, and names the reason.
			name: "the highest metric wins",
			s: scenario{min: 1, max: 10, current: 3,
				metrics: []autoscalingv2.MetricSpec{cpuUtilization(50), podsQPS("10"), objectQPS("15"), externalQPS(1000)}},
			setup: func(s *scenario) {
				pods, samples := cpuPods([]int64{500, 500, 500}, []int64{1000, 1000, 1000})
				s.pods = pods
				s.data = []MetricData{
					{PodMetrics: samples},                             // 50% of 50%: keep 3
					{PodMetrics: podSamples(15000, 15000, 15000)},     // 15/10: ceil(4.5) = 5
					{Value: 30000, Timestamp: testNow},                // 30/15 * 3 ready = 6
					{Values: []int64{1000, 2000}, Timestamp: testNow}, // 3000/1000 * 3 = 9 > 2*3
				}
			},
			wantDesired: 6, wantRescale: true,
			wantReason: fmt.Sprintf("external metric qps(%+v) above target", emptySelector),
			wantConditions: []cond{readyForScale,
				{Type: autoscalingv2.ScalingActive, Status: T, Reason: ReasonValidMetricFound,
					Message: fmt.Sprintf("the HPA was able to successfully calculate a replica count from external metric qps(%+v)", emptySelector)},
				{Type: autoscalingv2.ScalingLimited, Status: T, Reason: ReasonScaleUpLimit}},
			wantMetrics: 4,
		},
		{
			name: "object metric reason",
			s:    scenario{min: 2, max: 6, current: 3, metrics: []autoscalingv2.MetricSpec{objectQPS("15")}},
			setup: func(s *scenario) {
				s.pods, _ = threePods(0, 0, 0)
				s.data = []MetricData{{Value: 20000}}
			},
			wantDesired: 4, wantRescale: true, wantReason: "Deployment metric qps above target",
			wantConditions: []cond{readyForScale, validMetric, withinRange}, wantMetrics: 1,
		},
		{
			name:        "missing selector",
			s:           scenario{min: 1, max: 10, current: 3, previousDesired: 3, selector: "-", metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
			wantDesired: 3,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonInvalidSelector,
				Message: "the HPA target's scale is missing a selector"}},
			wantEvents: []string{"Warning SelectorRequired", "Warning FailedComputeMetricsReplicas"},
			wantErr:    "selector is required",
		},
		{
			name:           "unparsable selector",
			s:              scenario{min: 1, max: 10, current: 3, previousDesired: 3, selector: "cheddar cheese", metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
			wantDesired:    3,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonInvalidSelector}},
			wantEvents:     []string{"Warning InvalidSelector", "Warning FailedComputeMetricsReplicas"},
			wantErr:        "couldn't convert selector into a corresponding internal selector object: ",
		},
		{
			name: "ambiguous selector",
			s: scenario{min: 1, max: 10, current: 3, previousDesired: 3, metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)},
				autoscalers: []string{"test-namespace/fhpa", "test-namespace/other"}},
			wantDesired: 3,
			wantConditions: []cond{gotScale, {Type: autoscalingv2.ScalingActive, Status: F, Reason: ReasonAmbiguousSelector,
				Message: "pods by selector name=test-pod are controlled by multiple HPAs: [test-namespace/fhpa test-namespace/other]"}},
			wantEvents: []string{"Warning AmbiguousSelector", "Warning FailedComputeMetricsReplicas"},
			wantErr:    "pods by selector name=test-pod are controlled by multiple HPAs: [test-namespace/fhpa test-namespace/other]",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.s
			if tc.setup != nil {
				tc.setup(&s)
			}
			rec, _ := s.run()
			if rec.DesiredReplicas != tc.wantDesired || rec.Rescale != tc.wantRescale || rec.Reason != tc.wantReason {
				t.Errorf("got desired %d rescale %v reason %q, want %d %v %q",
					rec.DesiredReplicas, rec.Rescale, rec.Reason, tc.wantDesired, tc.wantRescale, tc.wantReason)
			}
			checkConditions(t, rec.Status.Conditions, tc.wantConditions)
			if diff := cmp.Diff(tc.wantEvents, eventReasons(rec.Events)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			switch {
			case tc.wantErr == "" && rec.Err != nil:
				t.Errorf("unexpected error: %v", rec.Err)
			case tc.wantErr != "" && (rec.Err == nil || len(rec.Err.Error()) < len(tc.wantErr) || rec.Err.Error()[:len(tc.wantErr)] != tc.wantErr):
				t.Errorf("error = %v, want %q", rec.Err, tc.wantErr)
			}
			metrics := 0
			for _, m := range rec.Status.CurrentMetrics {
				if m.Type != "" {
					metrics++
				}
			}
			if metrics != tc.wantMetrics {
				t.Errorf("status has %d metrics, want %d: %+v", metrics, tc.wantMetrics, rec.Status.CurrentMetrics)
			}
			if rec.Status.CurrentReplicas != s.current || *rec.Status.ObservedGeneration != 7 {
				t.Errorf("status current replicas %d, observed generation %d", rec.Status.CurrentReplicas, *rec.Status.ObservedGeneration)
			}
			wantStatusDesired := rec.DesiredReplicas
			if rec.Rescale || (rec.Err != nil && !rec.Rescale) {
				wantStatusDesired = s.previousDesired
			}
			if rec.Status.DesiredReplicas != wantStatusDesired {
				t.Errorf("status desired replicas = %d, want %d", rec.Status.DesiredReplicas, wantStatusDesired)
			}
		})
	}
}
