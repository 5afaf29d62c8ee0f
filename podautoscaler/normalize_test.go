package podautoscaler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// rules builds scaling rules as upstream's generateScalingRules: a Pods
// and/or a Percent policy (a zero value leaves it out), select Max.
func rules(pods, podsPeriod, percent, percentPeriod, window int32) *autoscalingv2.HPAScalingRules {
	r := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To(window),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
	}
	if pods != 0 {
		r.Policies = append(r.Policies, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: pods, PeriodSeconds: podsPeriod})
	}
	if percent != 0 {
		r.Policies = append(r.Policies, autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: percent, PeriodSeconds: percentPeriod})
	}
	return r
}

// spread places events evenly over the last periodSeconds, each in the
// middle of its segment, as upstream's generateEventsUniformDistribution:
// three events over 120s are 100s, 60s and 20s old.
func spread(changes []int32, periodSeconds int) []scaleEvent {
	events := make([]scaleEvent, len(changes))
	segment := float64(periodSeconds) / float64(len(changes))
	for i, c := range changes {
		age := time.Duration(float64(periodSeconds) - segment*float64(i+1) + segment/2)
		events[i] = scaleEvent{replicaChange: c, timestamp: testNow.Add(-time.Second * age)}
	}
	return events
}

func TestDefaultBehavior(t *testing.T) {
	t.Parallel()
	upDefault := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
	downDefault := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](300),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
	tolerance := resource.MustParse("0.05")
	cases := []struct {
		name string
		in   *autoscalingv2.HorizontalPodAutoscalerBehavior
		want *autoscalingv2.HorizontalPodAutoscalerBehavior
	}{
		{name: "nil", want: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: upDefault, ScaleDown: downDefault}},
		{name: "empty", in: &autoscalingv2.HorizontalPodAutoscalerBehavior{},
			want: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: upDefault, ScaleDown: downDefault}},
		{
			name: "partial rules keep what is set",
			in: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60), Tolerance: &tolerance},
				ScaleDown: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect)},
			},
			want: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleUp: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: ptr.To[int32](60), SelectPolicy: upDefault.SelectPolicy,
					Policies: upDefault.Policies, Tolerance: &tolerance,
				},
				ScaleDown: &autoscalingv2.HPAScalingRules{
					StabilizationWindowSeconds: ptr.To[int32](300), SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect),
					Policies: downDefault.Policies,
				},
			},
		},
		{
			name: "policies replace the default ones",
			in:   &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(2, 60, 0, 0, 30)},
			want: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: upDefault, ScaleDown: rules(2, 60, 0, 0, 30)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var before *autoscalingv2.HorizontalPodAutoscalerBehavior
			if tc.in != nil {
				before = tc.in.DeepCopy()
			}
			got := DefaultBehavior(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DefaultBehavior (-want +got):\n%s", diff)
			}
			if tc.in != nil && !cmp.Equal(before, tc.in) {
				t.Errorf("the input was modified")
			}
		})
	}
}

func TestEffectiveBehavior(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.DownscaleStabilizationWindow = 2 * time.Minute
	if got := cfg.effectiveBehavior(nil); got != nil {
		t.Errorf("nil behavior became %v", got)
	}
	// Upstream leaves an unset scale-down window to the controller flag.
	got := cfg.effectiveBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(1, 60, 0, 0, 10)})
	if w := *got.ScaleDown.StabilizationWindowSeconds; w != 120 {
		t.Errorf("scale-down window = %d, want 120", w)
	}
	got = cfg.effectiveBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: rules(1, 60, 0, 0, 10)})
	if w := *got.ScaleDown.StabilizationWindowSeconds; w != 10 {
		t.Errorf("scale-down window = %d, want 10", w)
	}
}

// TestLimitWithoutBehavior ports upstream's TestConvertDesiredReplicasWithRules.
func TestLimitWithoutBehavior(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                             string
		current, desired, min, max, want int32
		wantReason                       string
	}{
		{name: "within range", current: 5, desired: 7, min: 3, max: 8, want: 7, wantReason: ReasonDesiredWithinRange},
		{name: "below minReplicas", current: 3, desired: 1, min: 2, max: 8, want: 2, wantReason: ReasonTooFewReplicas},
		{name: "zero within range when minReplicas is 0", current: 1, desired: 0, min: 0, max: 10, want: 0, wantReason: ReasonDesiredWithinRange},
		{name: "maxReplicas below the scale-up limit", current: 20, desired: 1000, min: 1, max: 10, want: 10, wantReason: ReasonTooManyReplicas},
		{name: "scale-up limit of twice current", current: 3, desired: 1000, min: 1, max: 2000, want: 6, wantReason: ReasonScaleUpLimit},
		{name: "scale-up limit of at least 4", current: 1, desired: 10, min: 1, max: 20, want: 4, wantReason: ReasonScaleUpLimit},
		{name: "scale-up limit equal to maxReplicas", current: 3, desired: 7, min: 1, max: 6, want: 6, wantReason: ReasonTooManyReplicas},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, reason, _ := limitWithoutBehavior(tc.current, tc.desired, tc.min, tc.max)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("got %d %s, want %d %s", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestStabilizeDownscale ports upstream's TestNormalizeDesiredReplicas
// (5-minute window).
func TestStabilizeDownscale(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return testNow.Add(-d) }
	cases := []struct {
		name    string
		history []timestampedRecommendation
		desired int32
		want    int32
		wantLen int
	}{
		{name: "empty log", history: []timestampedRecommendation{}, desired: 5, want: 5, wantLen: 1},
		{name: "stabilize", history: []timestampedRecommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}},
			desired: 3, want: 5, wantLen: 3},
		{name: "no stabilize", history: []timestampedRecommendation{{1, ago(2 * time.Minute)}, {2, ago(time.Minute)}},
			desired: 3, want: 3, wantLen: 3},
		{name: "no stabilize, old recommendations", history: []timestampedRecommendation{{10, ago(10 * time.Minute)}, {9, ago(9 * time.Minute)}},
			desired: 3, want: 3, wantLen: 2},
		{name: "stabilize, old recommendations",
			history: []timestampedRecommendation{{10, ago(10 * time.Minute)}, {4, ago(time.Minute)}, {5, ago(2 * time.Minute)}, {9, ago(9 * time.Minute)}},
			desired: 3, want: 5, wantLen: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := History{recommendations: tc.history}
			if got := h.stabilizeDownscale(tc.desired, 5*time.Minute, testNow); got != tc.want {
				t.Errorf("stabilized = %d, want %d", got, tc.want)
			}
			if len(h.recommendations) != tc.wantLen {
				t.Errorf("history holds %d recommendations, want %d", len(h.recommendations), tc.wantLen)
			}
		})
	}
}

// TestStabilizeWithBehavior ports upstream's
// TestNormalizeDesiredReplicasWithBehavior.
func TestStabilizeWithBehavior(t *testing.T) {
	t.Parallel()
	ago := func(d time.Duration) time.Time { return testNow.Add(-d) }
	cases := []struct {
		name                 string
		history              []timestampedRecommendation
		current, desired     int32
		upWindow, downWindow time.Duration
		want                 int32
		wantHistory          []int32 // nil: not checked
		wantReason           string
	}{
		{name: "empty history, scale down", current: 100, desired: 5, want: 5, wantHistory: []int32{5}, wantReason: ReasonScaleDownStabilized},
		{name: "scale down stabilization", history: []timestampedRecommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}},
			current: 100, desired: 3, downWindow: 3 * time.Minute, want: 5, wantHistory: []int32{4, 5, 3}},
		{name: "scale up stabilization", history: []timestampedRecommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}},
			current: 1, desired: 7, upWindow: 5 * time.Minute, want: 4, wantHistory: []int32{4, 5, 7}, wantReason: ReasonScaleUpStabilized},
		{name: "no scale down stabilization", history: []timestampedRecommendation{{1, ago(2 * time.Minute)}, {2, ago(time.Minute)}},
			current: 100, desired: 3, upWindow: 5 * time.Minute, want: 3, wantHistory: []int32{1, 2, 3}},
		{name: "no scale up stabilization", history: []timestampedRecommendation{{4, ago(2 * time.Minute)}, {5, ago(time.Minute)}},
			current: 1, desired: 3, downWindow: 5 * time.Minute, want: 3, wantHistory: []int32{4, 5, 3}},
		{name: "no scale down stabilization, expired slot reused", history: []timestampedRecommendation{{10, ago(10 * time.Minute)}, {9, ago(9 * time.Minute)}},
			current: 100, desired: 3, want: 3, wantHistory: []int32{10, 3}},
		{name: "no scale up stabilization, expired slot reused", history: []timestampedRecommendation{{10, ago(10 * time.Minute)}, {9, ago(9 * time.Minute)}},
			current: 1, desired: 100, want: 100, wantHistory: []int32{10, 100}},
		{name: "scale down stabilization, one expired slot reused",
			history: []timestampedRecommendation{{10, ago(10 * time.Minute)}, {4, ago(time.Minute)}, {5, ago(2 * time.Minute)}, {9, ago(9 * time.Minute)}},
			current: 100, desired: 3, downWindow: 3 * time.Minute, want: 5, wantHistory: []int32{10, 4, 5, 3}},
		{
			// Only the first recommendation is outside both windows.
			name:    "scale up stabilization, one expired slot reused",
			history: []timestampedRecommendation{{10, ago(100 * time.Minute)}, {6, ago(time.Minute)}, {5, ago(2 * time.Minute)}, {9, ago(3 * time.Minute)}},
			current: 1, desired: 100, upWindow: 5 * time.Minute, downWindow: 5 * time.Minute, want: 5, wantHistory: []int32{100, 6, 5, 9},
		},
		{name: "no scale up when the recommendation goes down",
			history: []timestampedRecommendation{{2, ago(100 * time.Minute)}, {3, ago(3 * time.Minute)}},
			current: 2, desired: 1, upWindow: 5 * time.Minute, downWindow: 5 * time.Minute, want: 2},
		{name: "no scale down when the recommendation goes up",
			history: []timestampedRecommendation{{2, ago(100 * time.Minute)}, {1, ago(3 * time.Minute)}},
			current: 2, desired: 3, upWindow: 5 * time.Minute, downWindow: 5 * time.Minute, want: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := History{recommendations: tc.history}
			got, reason, _ := h.stabilizeWithBehavior(tc.current, tc.desired, tc.upWindow, tc.downWindow, testNow)
			if got != tc.want {
				t.Errorf("stabilized = %d, want %d", got, tc.want)
			}
			if tc.wantReason != "" && reason != tc.wantReason {
				t.Errorf("reason = %s, want %s", reason, tc.wantReason)
			}
			if tc.wantHistory != nil {
				var gotHistory []int32
				for _, r := range h.recommendations {
					gotHistory = append(gotHistory, r.replicas)
				}
				if diff := cmp.Diff(tc.wantHistory, gotHistory); diff != "" {
					t.Errorf("history (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestLimitWithBehavior ports upstream's TestScalingWithRules (rules unset
// are defaulted as the API does) and TestCalculateScale{Up,Down}Limit*.
func TestLimitWithBehavior(t *testing.T) {
	t.Parallel()
	minChange := func(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
		r.SelectPolicy = ptr.To(autoscalingv2.MinChangePolicySelect)
		return r
	}
	disabled := func(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
		r.SelectPolicy = ptr.To(autoscalingv2.DisabledPolicySelect)
		return r
	}
	cases := []struct {
		name                 string
		upEvents, downEvents []scaleEvent
		min, max             int32
		up, down             *autoscalingv2.HPAScalingRules
		current, desired     int32
		want                 int32
		wantReason           string
	}{
		{name: "within range", current: 5, desired: 7, min: 3, max: 8, want: 7, wantReason: ReasonDesiredWithinRange},
		{name: "below minReplicas", current: 3, desired: 1, min: 2, max: 8, want: 2, wantReason: ReasonTooFewReplicas},
		{name: "zero within range when minReplicas is 0", current: 1, desired: 0, min: 0, max: 10, want: 0, wantReason: ReasonDesiredWithinRange},
		{name: "maxReplicas below the scale-up limit", current: 20, desired: 1000, min: 1, max: 10, want: 10, wantReason: ReasonTooManyReplicas},
		{name: "more than maxReplicas", current: 100, desired: 1000, min: 100, max: 150, want: 150, wantReason: ReasonTooManyReplicas},
		{name: "1% per minute", up: rules(0, 0, 1, 60, 0), current: 3, desired: 1000, min: 1, max: 2000, want: 4, wantReason: ReasonScaleUpLimit},
		{name: "20 pods per minute down", down: rules(20, 60, 0, 0, 0), current: 1000, desired: 3, min: 3, max: 2000, want: 980, wantReason: ReasonScaleDownLimit},
		{name: "default scale up: +100%", current: 10, desired: 50, min: 1, max: 1000, want: 20, wantReason: ReasonScaleUpLimit},
		{name: "default scale up: +4 pods for small targets", current: 1, desired: 50, min: 1, max: 1000, want: 5, wantReason: ReasonScaleUpLimit},
		{name: "pods policy larger than percent policy", up: rules(100, 60, 100, 60, 0), current: 10, desired: 500, min: 1, max: 1000, want: 110, wantReason: ReasonScaleUpLimit},
		{name: "percent policy larger than pods policy", up: rules(2, 60, 100, 60, 0), current: 10, desired: 500, min: 1, max: 1000, want: 20, wantReason: ReasonScaleUpLimit},
		{name: "large pods policy", up: rules(100, 60, 0, 0, 0), current: 10, desired: 50, min: 1, max: 1000, want: 50, wantReason: ReasonDesiredWithinRange},
		{name: "large percent policy", up: rules(10000, 60, 0, 0, 0), current: 10, desired: 50, min: 1, max: 1000, want: 50, wantReason: ReasonDesiredWithinRange},
		{name: "pods policy limit", up: rules(30, 60, 0, 0, 0), current: 10, desired: 50, min: 1, max: 1000, want: 40, wantReason: ReasonScaleUpLimit},
		{name: "percent policy limit", up: rules(0, 0, 200, 60, 0), current: 10, desired: 50, min: 1, max: 1000, want: 30, wantReason: ReasonScaleUpLimit},
		{name: "down: percent policy larger than pods policy", down: rules(20, 60, 1, 60, 300), current: 100, desired: 2, min: 1, max: 1000, want: 80, wantReason: ReasonScaleDownLimit},
		{name: "down: pods policy larger than percent policy", down: rules(2, 60, 1, 60, 300), current: 100, desired: 2, min: 1, max: 1000, want: 98, wantReason: ReasonScaleDownLimit},
		{name: "down: minReplicas with a large pods policy", down: rules(100, 60, 0, 0, 300), current: 10, desired: 0, min: 1, max: 1000, want: 1, wantReason: ReasonTooFewReplicas},
		{name: "down: minReplicas with a large percent policy", down: rules(0, 0, 100, 60, 300), current: 10, desired: 2, min: 5, max: 1000, want: 5, wantReason: ReasonTooFewReplicas},
		{name: "down: pods policy limit", down: rules(5, 60, 0, 0, 300), current: 10, desired: 2, min: 1, max: 1000, want: 5, wantReason: ReasonScaleDownLimit},
		{name: "down: percent policy exactly reached", down: rules(0, 0, 50, 60, 300), current: 10, desired: 5, min: 1, max: 1000, want: 5, wantReason: ReasonDesiredWithinRange},

		// With scale events: [1 5 9] over 120s are 100s, 60s and 20s old.
		{name: "maxReplicas with a large pods policy and events", upEvents: spread([]int32{1, 5, 9}, 120),
			up: rules(300, 60, 0, 0, 0), current: 100, desired: 500, min: 1, max: 200, want: 200, wantReason: ReasonTooManyReplicas},
		{name: "maxReplicas with a large percent policy and events", upEvents: spread([]int32{1, 5, 9}, 120),
			up: rules(0, 0, 10000, 60, 0), current: 100, desired: 500, min: 1, max: 200, want: 200, wantReason: ReasonTooManyReplicas},
		{
			// 120s ago there were 100-15 = 85 replicas, +5 allowed: 90 <
			// current, so hold at 100.
			name: "recent scale-ups used up the policy", upEvents: spread([]int32{1, 5, 9}, 120),
			up: rules(5, 120, 0, 0, 0), current: 100, desired: 500, min: 1, max: 1000, want: 100, wantReason: ReasonScaleUpLimit,
		},
		{name: "pods policy and previous scale-ups", upEvents: spread([]int32{1, 5, 9}, 120),
			up: rules(150, 120, 0, 0, 0), current: 100, desired: 500, min: 1, max: 1000, want: 235, wantReason: ReasonScaleUpLimit},
		{name: "percent policy and previous scale-ups", upEvents: spread([]int32{1, 5, 9}, 120),
			up: rules(0, 0, 200, 120, 0), current: 100, desired: 500, min: 1, max: 1000, want: 255, wantReason: ReasonScaleUpLimit},
		{
			// Period start: 6 - 4 + 2 = 4; +300% = 16.
			name: "percent policy and previous scale-ups and downs", upEvents: spread([]int32{4}, 120), downEvents: spread([]int32{2}, 120),
			up: rules(0, 0, 300, 300, 0), current: 6, desired: 24, min: 1, max: 1000, want: 16, wantReason: ReasonScaleUpLimit,
		},
		{name: "down: default policy and previous events", downEvents: spread([]int32{1, 5, 9}, 120),
			current: 10, desired: 5, min: 1, max: 1000, want: 5, wantReason: ReasonDesiredWithinRange},
		{name: "down: minReplicas nil-like with a large pods policy and events", downEvents: spread([]int32{1, 5, 9}, 120),
			down: rules(115, 120, 0, 0, 300), current: 100, desired: 0, min: 1, max: 1000, want: 1, wantReason: ReasonTooFewReplicas},
		{name: "down: minReplicas with a large pods policy and events", downEvents: spread([]int32{1, 5, 9}, 120),
			down: rules(130, 120, 0, 0, 300), current: 100, desired: 0, min: 5, max: 1000, want: 5, wantReason: ReasonTooFewReplicas},
		{name: "down: minReplicas with a 100% policy and events", downEvents: spread([]int32{1, 5, 9}, 120),
			down: rules(0, 0, 100, 120, 300), current: 100, desired: 2, min: 5, max: 1000, want: 5, wantReason: ReasonTooFewReplicas},
		{
			// 100 + 15 - 5 = 110 > current: hold at 100.
			name: "down: pods policy used up by previous events", downEvents: spread([]int32{1, 5, 9}, 120),
			down: rules(5, 120, 0, 0, 300), current: 100, desired: 2, min: 1, max: 1000, want: 100, wantReason: ReasonScaleDownLimit,
		},
		{
			// (100 + 12) - 50% = 56.
			name: "down: percent policy and previous events", downEvents: spread([]int32{2, 4, 6}, 120),
			down: rules(0, 0, 50, 120, 300), current: 100, desired: 0, min: 1, max: 1000, want: 56, wantReason: ReasonScaleDownLimit,
		},
		{
			// Period start: 10 - 2 + 4 = 12; -50% = 6.
			name: "down: percent policy and previous scale-ups and downs", upEvents: spread([]int32{2}, 120), downEvents: spread([]int32{4}, 120),
			down: rules(0, 0, 50, 180, 0), current: 10, desired: 1, min: 1, max: 1000, want: 6, wantReason: ReasonScaleDownLimit,
		},
		{
			// (100 + 30) - 10% = 117 > current: hold at 100.
			name: "down: previous events prevent further scale-down", downEvents: spread([]int32{10, 10, 10}, 120),
			down: rules(0, 0, 10, 120, 300), current: 100, desired: 0, min: 1, max: 1000, want: 100, wantReason: ReasonScaleDownLimit,
		},
		{
			// (10 + 30) - 1000% < 0: the metrics' 5 stands.
			name: "down: previous events still allow more scale-down", downEvents: spread([]int32{10, 10, 10}, 120),
			down: rules(0, 0, 1000, 120, 300), current: 10, desired: 5, min: 1, max: 1000, want: 5, wantReason: ReasonDesiredWithinRange,
		},
		{name: "up: events of one policy", upEvents: spread([]int32{8, 12, 9, 11}, 120),
			up: rules(1000, 60, 0, 0, 0), current: 100, desired: 200, min: 1, max: 1000, want: 200, wantReason: ReasonDesiredWithinRange},
		{name: "up: events of two policies", upEvents: spread([]int32{8, 12, 9, 11}, 120),
			up: rules(1000, 120, 100, 60, 0), current: 100, desired: 200, min: 1, max: 1000, want: 200, wantReason: ReasonDesiredWithinRange},
		{name: "up: events of two other policies", upEvents: spread([]int32{8, 12, 9, 11}, 120),
			up: rules(1000, 30, 100, 60, 0), current: 100, desired: 200, min: 1, max: 1000, want: 200, wantReason: ReasonDesiredWithinRange},
		{name: "down: events of one policy", downEvents: spread([]int32{8, 12, 9, 11}, 120),
			down: rules(1000, 60, 0, 0, 300), current: 100, desired: 5, min: 1, max: 1000, want: 5, wantReason: ReasonDesiredWithinRange},
		{name: "down: events of two policies", downEvents: spread([]int32{8, 12, 9, 11}, 120),
			down: rules(1000, 120, 100, 60, 300), current: 100, desired: 5, min: 1, max: 1000, want: 5, wantReason: ReasonDesiredWithinRange},
		{name: "down: events of two other policies", downEvents: spread([]int32{8, 12, 9, 11}, 120),
			down: rules(1000, 30, 100, 60, 300), current: 100, desired: 5, min: 1, max: 1000, want: 5, wantReason: ReasonDesiredWithinRange},

		// selectPolicy Min and Disabled.
		{name: "up: Min picks the strictest policy", up: minChange(rules(2, 60, 50, 60, 0)),
			current: 1, desired: 10, min: 1, max: 100, want: 2, wantReason: ReasonScaleUpLimit},
		{name: "down: Min picks the strictest policy", down: minChange(rules(2, 60, 50, 60, 0)),
			current: 5, desired: 1, min: 1, max: 100, want: 3, wantReason: ReasonScaleDownLimit},
		{name: "up: Disabled", up: disabled(rules(2, 60, 50, 60, 0)),
			current: 5, desired: 10, min: 1, max: 100, want: 5, wantReason: ReasonScaleUpLimit},
		{name: "down: Disabled", down: disabled(rules(2, 60, 50, 60, 0)),
			current: 5, desired: 1, min: 1, max: 100, want: 5, wantReason: ReasonScaleDownLimit},
		{name: "down: Disabled still bounded by minReplicas above current", down: disabled(rules(2, 60, 50, 60, 0)),
			current: 5, desired: 1, min: 6, max: 100, want: 6, wantReason: ReasonTooFewReplicas},
		{name: "no change", current: 5, desired: 5, min: 1, max: 100, want: 5, wantReason: ReasonDesiredWithinRange},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := History{scaleUpEvents: tc.upEvents, scaleDownEvents: tc.downEvents}
			b := DefaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: tc.up, ScaleDown: tc.down})
			got, reason, _ := h.limitWithBehavior(b, tc.current, tc.desired, tc.min, tc.max, testNow)
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("got %d %s, want %d %s", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestRecordScaleEvent ports upstream's TestStoreScaleEvents, for both
// directions.
func TestRecordScaleEvent(t *testing.T) {
	t.Parallel()
	ago := func(s int) time.Time { return testNow.Add(-time.Duration(s) * time.Second) }
	type event struct {
		change   int32
		outdated bool
	}
	cases := []struct {
		name        string
		rules       *autoscalingv2.HPAScalingRules // nil: no behavior
		previous    []scaleEvent
		wantChanged int32 // within the last 60s, before recording
		want        []event
	}{
		{name: "no history, no behavior: nothing stored", previous: []scaleEvent{}, want: []event{}},
		{name: "no history, two policies", rules: rules(10, 60, 100, 60, 0), previous: []scaleEvent{}, want: []event{{5, false}}},
		{name: "no behavior keeps an outdated event", previous: []scaleEvent{{replicaChange: 7, timestamp: ago(61)}},
			want: []event{{7, false}}},
		{name: "an outdated event is replaced", rules: rules(10, 60, 100, 60, 0),
			previous: []scaleEvent{{replicaChange: 7, timestamp: ago(61)}}, want: []event{{5, false}}},
		{name: "a recent event is kept", rules: rules(10, 60, 100, 60, 0),
			previous: []scaleEvent{{replicaChange: 7, timestamp: ago(58)}}, wantChanged: 7, want: []event{{7, false}, {5, false}}},
		{name: "two events, one replaced", rules: rules(10, 60, 0, 0, 0),
			previous:    []scaleEvent{{replicaChange: 7, timestamp: ago(61)}, {replicaChange: 6, timestamp: ago(59)}},
			wantChanged: 6, want: []event{{5, false}, {6, false}}},
		{
			// Both 61s-old events are outdated; the last one is reused.
			name: "policies with different periods", rules: rules(10, 60, 100, 30, 0),
			previous: []scaleEvent{
				{replicaChange: 8, timestamp: ago(29)}, {replicaChange: 6, timestamp: ago(59)},
				{replicaChange: 7, timestamp: ago(61)}, {replicaChange: 9, timestamp: ago(61)},
			},
			wantChanged: 14, want: []event{{8, false}, {6, false}, {7, true}, {5, false}},
		},
		{name: "two recent events", rules: rules(10, 120, 100, 30, 0),
			previous:    []scaleEvent{{replicaChange: 7, timestamp: ago(58)}, {replicaChange: 6, timestamp: ago(59)}},
			wantChanged: 13, want: []event{{7, false}, {6, false}, {5, false}}},
	}
	for _, tc := range cases {
		for _, up := range []bool{true, false} {
			name := tc.name + map[bool]string{true: " (up)", false: " (down)"}[up]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var behavior *autoscalingv2.HorizontalPodAutoscalerBehavior
				previous := append([]scaleEvent{}, tc.previous...)
				h := History{}
				to := int32(15)
				if up {
					h.scaleUpEvents = previous
					if tc.rules != nil {
						behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: tc.rules}
					}
				} else {
					h.scaleDownEvents = previous
					to = 5
					if tc.rules != nil {
						behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: tc.rules}
					}
				}
				if got := replicasChangedWithin(previous, time.Minute, testNow); got != tc.wantChanged {
					t.Errorf("changed within 60s = %d, want %d", got, tc.wantChanged)
				}
				h.RecordScaleEvent(behavior, 10, to, testNow)
				stored := h.scaleDownEvents
				if up {
					stored = h.scaleUpEvents
				}
				got := []event{}
				for _, e := range stored {
					got = append(got, event{e.replicaChange, e.outdated})
				}
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(event{})); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
			})
		}
	}
}
