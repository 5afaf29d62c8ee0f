package v1alpha1

import (
	"reflect"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

func TestSetDefaultsFederatedHPA(t *testing.T) {
	t.Parallel()
	scaleUp := func(window int32) *autoscalingv2.HPAScalingRules {
		return &autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: ptr.To(window),
			SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
				{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
			},
		}
	}
	scaleDown := func(window int32) *autoscalingv2.HPAScalingRules {
		return &autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: ptr.To(window),
			SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
			Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
		}
	}
	cpu80 := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}},
	}}
	memory := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1Gi"))}},
	}}
	tests := []struct {
		name string
		in   FederatedHPASpec
		want FederatedHPASpec
	}{
		{"empty", FederatedHPASpec{MaxReplicas: 3}, FederatedHPASpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, Metrics: cpu80}},
		{"set values kept", FederatedHPASpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 3, Metrics: memory},
			FederatedHPASpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 3, Metrics: memory}},
		{"empty behavior", FederatedHPASpec{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}},
			FederatedHPASpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, Metrics: cpu80,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: scaleUp(0), ScaleDown: scaleDown(300)}}},
		{"stabilization windows kept", FederatedHPASpec{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](10)},
			ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](10)},
		}}, FederatedHPASpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, Metrics: cpu80,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: scaleUp(10), ScaleDown: scaleDown(10)}}},
		{"empty policies defaulted", FederatedHPASpec{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{}},
		}}, FederatedHPASpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, Metrics: cpu80,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: scaleUp(0), ScaleDown: scaleDown(300)}}},
		{"policies and select kept", FederatedHPASpec{MaxReplicas: 3, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleDown: &autoscalingv2.HPAScalingRules{
				SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect),
				Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}},
				Tolerance:    ptr.To(resource.MustParse("0.05")),
			},
		}}, FederatedHPASpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 3, Metrics: cpu80,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: scaleUp(0), ScaleDown: &autoscalingv2.HPAScalingRules{
				StabilizationWindowSeconds: ptr.To[int32](300),
				SelectPolicy:               ptr.To(autoscalingv2.DisabledPolicySelect),
				Policies:                   []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}},
				Tolerance:                  ptr.To(resource.MustParse("0.05")),
			}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &FederatedHPA{Spec: tc.in}
			SetObjectDefaults_FederatedHPA(f)
			if !reflect.DeepEqual(f.Spec, tc.want) {
				t.Errorf("defaulted spec\n got %+v\nwant %+v", f.Spec, tc.want)
			}
		})
	}
}

func TestDefaultScaleRulesDoNotAlias(t *testing.T) {
	t.Parallel()
	in := &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 1}}}
	out := DefaultScaleUpRules(in)
	out.Policies[0].Value = 9
	if in.Policies[0].Value != 1 || in.StabilizationWindowSeconds != nil {
		t.Errorf("DefaultScaleUpRules modified its argument: %+v", in)
	}
	if a, b := DefaultScaleDownRules(nil), DefaultScaleDownRules(nil); a.Policies[0] != b.Policies[0] || &a.Policies[0] == &b.Policies[0] {
		t.Errorf("DefaultScaleDownRules(nil) must return fresh equal rules")
	}
}

func TestSetDefaultsCronFederatedHPARule(t *testing.T) {
	t.Parallel()
	c := &CronFederatedHPA{Spec: CronFederatedHPASpec{Rules: []CronFederatedHPARule{
		{Name: "a"},
		{Name: "b", Suspend: ptr.To(true), SuccessfulHistoryLimit: ptr.To[int32](5), FailedHistoryLimit: ptr.To[int32](0)},
	}}}
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.Default(c) // through the registered defaulters, as the API server does
	want := []CronFederatedHPARule{
		{Name: "a", Suspend: ptr.To(false), SuccessfulHistoryLimit: ptr.To[int32](3), FailedHistoryLimit: ptr.To[int32](3)},
		{Name: "b", Suspend: ptr.To(true), SuccessfulHistoryLimit: ptr.To[int32](5), FailedHistoryLimit: ptr.To[int32](0)},
	}
	if !reflect.DeepEqual(c.Spec.Rules, want) {
		t.Errorf("defaulted rules\n got %+v\nwant %+v", c.Spec.Rules, want)
	}
}
