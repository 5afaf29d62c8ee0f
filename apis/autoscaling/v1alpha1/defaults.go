package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Scaling defaults of a Kubernetes HorizontalPodAutoscaler, which a
// FederatedHPA shares. They are written out here rather than imported so
// that the API types do not depend on k8s.io/kubernetes's controllers.
const (
	// defaultScaleUpPodsValue is how many pods a scale-up may add per period.
	defaultScaleUpPodsValue int32 = 4
	// defaultScalePercentValue is the percentage of pods a scale-up or scale-down may change per period.
	defaultScalePercentValue int32 = 100
	// defaultScalePeriodSeconds is the period of the default scaling policies.
	defaultScalePeriodSeconds int32 = 15
	// defaultScaleUpStabilizationWindowSeconds is the scale-up stabilization window.
	defaultScaleUpStabilizationWindowSeconds int32 = 0
	// defaultScaleDownStabilizationWindowSeconds is the scale-down stabilization window.
	defaultScaleDownStabilizationWindowSeconds int32 = 300
)

// SetDefaults_FederatedHPA defaults minReplicas to 1, an empty metrics list to
// 80% average CPU utilization and, when a behavior is given, its unset rules
// and fields as the Kubernetes HPA does.
func SetDefaults_FederatedHPA(obj *FederatedHPA) {
	if obj.Spec.MinReplicas == nil {
		obj.Spec.MinReplicas = ptr.To(DefaultMinReplicas)
	}
	if len(obj.Spec.Metrics) == 0 {
		obj.Spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: ptr.To(DefaultCPUUtilization),
				},
			},
		}}
	}
	// Like the Kubernetes HPA, a nil behavior stays nil: the controller then
	// uses DefaultScaleUpRules(nil) and DefaultScaleDownRules(nil).
	if obj.Spec.Behavior != nil {
		obj.Spec.Behavior.ScaleUp = DefaultScaleUpRules(obj.Spec.Behavior.ScaleUp)
		obj.Spec.Behavior.ScaleDown = DefaultScaleDownRules(obj.Spec.Behavior.ScaleDown)
	}
}

// SetDefaults_CronFederatedHPARule defaults suspend to false and both
// history limits to 3.
func SetDefaults_CronFederatedHPARule(obj *CronFederatedHPARule) {
	if obj.Suspend == nil {
		obj.Suspend = ptr.To(false)
	}
	if obj.SuccessfulHistoryLimit == nil {
		obj.SuccessfulHistoryLimit = ptr.To(DefaultHistoryLimit)
	}
	if obj.FailedHistoryLimit == nil {
		obj.FailedHistoryLimit = ptr.To(DefaultHistoryLimit)
	}
}

// DefaultScaleUpRules returns rules with every unset field of r taken from
// the Kubernetes HPA scale-up defaults: no stabilization window, policy
// Max of +4 pods or +100% every 15 seconds. r is not modified.
func DefaultScaleUpRules(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	d := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To(defaultScaleUpStabilizationWindowSeconds),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: defaultScaleUpPodsValue, PeriodSeconds: defaultScalePeriodSeconds},
			{Type: autoscalingv2.PercentScalingPolicy, Value: defaultScalePercentValue, PeriodSeconds: defaultScalePeriodSeconds},
		},
	}
	return overlayScalingRules(r, d)
}

// DefaultScaleDownRules returns rules with every unset field of r taken
// from the Kubernetes HPA scale-down defaults: a 300-second stabilization
// window, policy Max of -100% every 15 seconds. r is not modified.
func DefaultScaleDownRules(r *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	d := &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To(defaultScaleDownStabilizationWindowSeconds),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: defaultScalePercentValue, PeriodSeconds: defaultScalePeriodSeconds},
		},
	}
	return overlayScalingRules(r, d)
}

// overlayScalingRules copies the set fields of from over defaults and
// returns defaults.
func overlayScalingRules(from, defaults *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if from == nil {
		return defaults
	}
	from = from.DeepCopy()
	if from.StabilizationWindowSeconds != nil {
		defaults.StabilizationWindowSeconds = from.StabilizationWindowSeconds
	}
	if from.SelectPolicy != nil {
		defaults.SelectPolicy = from.SelectPolicy
	}
	// An empty list counts as unset: it does not survive JSON (omitempty).
	if len(from.Policies) > 0 {
		defaults.Policies = from.Policies
	}
	if from.Tolerance != nil {
		defaults.Tolerance = from.Tolerance
	}
	return defaults
}
