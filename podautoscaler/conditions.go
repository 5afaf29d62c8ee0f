package podautoscaler

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of the HPA status conditions and events, as upstream spells them.
const (
	// AbleToScale reasons.
	ReasonSucceededGetScale   = "SucceededGetScale"
	ReasonFailedGetScale      = "FailedGetScale"
	ReasonReadyForNewScale    = "ReadyForNewScale"
	ReasonScaleUpStabilized   = "ScaleUpStabilized"
	ReasonScaleDownStabilized = "ScaleDownStabilized"
	ReasonSucceededRescale    = "SucceededRescale"
	ReasonFailedUpdateScale   = "FailedUpdateScale"

	// ScalingActive reasons.
	ReasonValidMetricFound                 = "ValidMetricFound"
	ReasonScalingDisabled                  = "ScalingDisabled"
	ReasonInvalidSelector                  = "InvalidSelector"
	ReasonAmbiguousSelector                = "AmbiguousSelector"
	ReasonInvalidMetricSourceType          = "InvalidMetricSourceType"
	ReasonFailedGetResourceMetric          = "FailedGetResourceMetric"
	ReasonFailedGetContainerResourceMetric = "FailedGetContainerResourceMetric"
	ReasonFailedGetPodsMetric              = "FailedGetPodsMetric"
	ReasonFailedGetObjectMetric            = "FailedGetObjectMetric"
	ReasonFailedGetExternalMetric          = "FailedGetExternalMetric"

	// ScalingLimited reasons.
	ReasonDesiredWithinRange = "DesiredWithinRange"
	ReasonTooFewReplicas     = "TooFewReplicas"
	ReasonTooManyReplicas    = "TooManyReplicas"
	ReasonScaleUpLimit       = "ScaleUpLimit"
	ReasonScaleDownLimit     = "ScaleDownLimit"

	// Event-only reasons.
	ReasonSelectorRequired             = "SelectorRequired"
	ReasonFailedComputeMetricsReplicas = "FailedComputeMetricsReplicas"
	ReasonSuccessfulRescale            = "SuccessfulRescale"
	ReasonFailedRescale                = "FailedRescale"
)

// Event is an event the controller should record on the FederatedHPA.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type    string
	Reason  string
	Message string
}

func warning(reason, message string) Event {
	return Event{Type: corev1.EventTypeWarning, Reason: reason, Message: message}
}

// SetCondition sets the condition of the given type in conditions, adding
// it if absent, and returns the list. The transition time moves to now only
// when the status changes.
func SetCondition(conditions []autoscalingv2.HorizontalPodAutoscalerCondition, conditionType autoscalingv2.HorizontalPodAutoscalerConditionType,
	status corev1.ConditionStatus, reason, message string, now time.Time) []autoscalingv2.HorizontalPodAutoscalerCondition {
	i := conditionIndex(conditions, conditionType)
	if i < 0 {
		conditions = append(conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: conditionType})
		i = len(conditions) - 1
	}
	c := &conditions[i]
	if c.Status != status {
		c.LastTransitionTime = metav1.NewTime(now)
	}
	c.Status = status
	c.Reason = reason
	c.Message = message
	return conditions
}

// removeCondition drops the condition of the given type.
func removeCondition(conditions []autoscalingv2.HorizontalPodAutoscalerCondition, conditionType autoscalingv2.HorizontalPodAutoscalerConditionType) []autoscalingv2.HorizontalPodAutoscalerCondition {
	if i := conditionIndex(conditions, conditionType); i >= 0 {
		return append(conditions[:i:i], conditions[i+1:]...)
	}
	return conditions
}

func conditionIndex(conditions []autoscalingv2.HorizontalPodAutoscalerCondition, conditionType autoscalingv2.HorizontalPodAutoscalerConditionType) int {
	for i := range conditions {
		if conditions[i].Type == conditionType {
			return i
		}
	}
	return -1
}

// ScaleUnavailable returns the status and event upstream records when the
// target's scale cannot be read (nothing else of the status changes): the
// controller calls it when it cannot find or sum the member scales.
func ScaleUnavailable(status autoscalingv2.HorizontalPodAutoscalerStatus, err error, now time.Time) (autoscalingv2.HorizontalPodAutoscalerStatus, Event) {
	status = *status.DeepCopy()
	status.Conditions = SetCondition(status.Conditions, autoscalingv2.AbleToScale, corev1.ConditionFalse, ReasonFailedGetScale,
		fmt.Sprintf("the HPA controller was unable to get the target's current scale: %v", err), now)
	return status, warning(ReasonFailedGetScale, err.Error())
}
