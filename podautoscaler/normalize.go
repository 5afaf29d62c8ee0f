package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// Messages of the ScalingLimited condition.
const (
	messageDesiredWithinRange = "the desired count is within the acceptable range"
	messageTooFewReplicas     = "the desired replica count is less than the minimum replica count"
	messageTooManyReplicas    = "the desired replica count is more than the maximum replica count"
	messageScaleUpLimit       = "the desired replica count is increasing faster than the maximum scale rate"
	messageScaleDownLimit     = "the desired replica count is decreasing faster than the maximum scale rate"
)

// DefaultBehavior returns behavior with every unset field filled in as the
// Kubernetes HPA defaulting does (scale-up: no stabilization window, the
// larger of +4 pods and +100% every 15 seconds; scale-down: a 300-second
// window, -100% every 15 seconds). A nil behavior yields the full defaults.
// behavior is not modified. The rules come from the FederatedHPA API
// defaulting (apis/autoscaling/v1alpha1).
//
// Note that the algorithm itself, like upstream, treats a nil behavior
// differently from DefaultBehavior(nil): see Recommend.
func DefaultBehavior(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	var up, down *autoscalingv2.HPAScalingRules
	if behavior != nil {
		up, down = behavior.ScaleUp, behavior.ScaleDown
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   autoscalingv1alpha1.DefaultScaleUpRules(up),
		ScaleDown: autoscalingv1alpha1.DefaultScaleDownRules(down),
	}
}

// effectiveBehavior returns the behavior the algorithm applies: nil for a
// nil behavior, otherwise the defaulted behavior whose scale-down window,
// if the spec sets none, is c.DownscaleStabilizationWindow (upstream leaves
// that window to the controller flag).
func (c Config) effectiveBehavior(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	if behavior == nil {
		return nil
	}
	out := DefaultBehavior(behavior)
	if behavior.ScaleDown == nil || behavior.ScaleDown.StabilizationWindowSeconds == nil {
		out.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(c.DownscaleStabilizationWindow.Seconds()))
	}
	return out
}

// limitWithoutBehavior bounds desired by minReplicas and by maxReplicas or,
// if lower, the fixed scale-up limit of a FederatedHPA without behavior. It
// returns the bounded count and the ScalingLimited reason and message.
func limitWithoutBehavior(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	upper, upperReason, upperMessage := maxReplicas, ReasonTooManyReplicas, messageTooManyReplicas
	if limit := scaleUpLimit(current); maxReplicas > limit {
		upper, upperReason, upperMessage = limit, ReasonScaleUpLimit, messageScaleUpLimit
	}
	switch {
	case desired < minReplicas:
		return minReplicas, ReasonTooFewReplicas, messageTooFewReplicas
	case desired > upper:
		return upper, upperReason, upperMessage
	}
	return desired, ReasonDesiredWithinRange, messageDesiredWithinRange
}

// scaleUpLimit is the largest count a FederatedHPA without behavior may
// scale to in one step: double, and at least 4. It guards against a bogus
// usage report blowing the target up (kubernetes#32304).
func scaleUpLimit(current int32) int32 {
	return int32(math.Max(2.0*float64(current), 4.0))
}

// limitWithBehavior bounds desired by the behavior's scaling policies, given
// the recent scale events, and by minReplicas (scale-down) or maxReplicas
// (scale-up). It returns the bounded count and the ScalingLimited reason and
// message.
func (h *History) limitWithBehavior(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, current, desired, minReplicas, maxReplicas int32, now time.Time) (int32, string, string) {
	switch {
	case desired > current:
		// A limit below current means recent scale-ups used up the
		// policies: hold until they age out.
		limit := max(h.scaleUpLimit(behavior.ScaleUp, current, now), current)
		upper, reason, message := maxReplicas, ReasonTooManyReplicas, messageTooManyReplicas
		if maxReplicas > limit {
			upper, reason, message = limit, ReasonScaleUpLimit, messageScaleUpLimit
		}
		if desired > upper {
			return upper, reason, message
		}
	case desired < current:
		limit := min(h.scaleDownLimit(behavior.ScaleDown, current, now), current)
		lower, reason, message := minReplicas, ReasonTooFewReplicas, messageTooFewReplicas
		if minReplicas < limit {
			lower, reason, message = limit, ReasonScaleDownLimit, messageScaleDownLimit
		}
		if desired < lower {
			return lower, reason, message
		}
	}
	return desired, ReasonDesiredWithinRange, messageDesiredWithinRange
}

// scaleUpLimit returns the highest count the scale-up policies allow. Each
// policy counts from the size the target had at the start of its period;
// selectPolicy Max takes the most permissive policy, Min the strictest, and
// Disabled allows no change.
func (h *History) scaleUpLimit(rules *autoscalingv2.HPAScalingRules, current int32, now time.Time) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	minChange := *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect
	result := int32(math.MinInt32)
	if minChange {
		result = math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := h.periodStartReplicas(current, seconds(p.PeriodSeconds), now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start + p.Value
		case autoscalingv2.PercentScalingPolicy:
			// Round up, or a small target could never grow.
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if minChange {
			result = min(result, proposed)
		} else {
			result = max(result, proposed)
		}
	}
	return result
}

// scaleDownLimit returns the lowest count the scale-down policies allow,
// selecting among policies as scaleUpLimit does.
func (h *History) scaleDownLimit(rules *autoscalingv2.HPAScalingRules, current int32, now time.Time) int32 {
	if *rules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return current
	}
	minChange := *rules.SelectPolicy == autoscalingv2.MinChangePolicySelect
	result := int32(math.MaxInt32)
	if minChange {
		result = math.MinInt32
	}
	for _, p := range rules.Policies {
		start := h.periodStartReplicas(current, seconds(p.PeriodSeconds), now)
		var proposed int32
		switch p.Type {
		case autoscalingv2.PodsScalingPolicy:
			proposed = start - p.Value
		case autoscalingv2.PercentScalingPolicy:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		if minChange {
			result = max(result, proposed)
		} else {
			result = min(result, proposed)
		}
	}
	return result
}

// periodStartReplicas is the replica count at the start of a policy period,
// undoing the scale events within it.
func (h *History) periodStartReplicas(current int32, period time.Duration, now time.Time) int32 {
	return current - replicasChangedWithin(h.scaleUpEvents, period, now) + replicasChangedWithin(h.scaleDownEvents, period, now)
}
