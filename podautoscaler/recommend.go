package podautoscaler

import (
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/apis/autoscaling/v1alpha1"
)

// Input is everything one sync of a FederatedHPA computes from, read by the
// controller after it summed the target's scale over the member clusters.
type Input struct {
	// Namespace of the FederatedHPA; it appears in error messages.
	Namespace string
	// Spec of the FederatedHPA. ScaleTargetRef is not used.
	Spec autoscalingv1alpha1.FederatedHPASpec
	// Status is the FederatedHPA's current status: its conditions (and
	// their transition times), lastScaleTime, desiredReplicas (kept when
	// nothing is scaled) and observedGeneration carry over.
	Status autoscalingv2.HorizontalPodAutoscalerStatus

	// CurrentReplicas is the target's scale spec.replicas (summed).
	CurrentReplicas int32
	// StatusReplicas is the target's scale status.replicas (summed), used
	// by AverageValue targets of Object and External metrics.
	StatusReplicas int32
	// Selector is the target's scale status.selector.
	Selector string
	// AutoscalersSelectingPods lists, as namespace/name, every FederatedHPA
	// (this one included) whose selector matches one of Pods. More than one
	// makes the selector ambiguous and stops scaling.
	AutoscalersSelectingPods []string

	// Pods are the pods Selector matches, in every member cluster the
	// target is propagated to.
	Pods []Pod
	// Metrics holds the data read for Spec.Metrics, index by index.
	Metrics []MetricData
}

// Recommendation is the outcome of one sync. When Rescale is set, the
// controller updates the target's scale to DesiredReplicas and then calls
// Rescaled or RescaleFailed; in every case it then writes Status and records
// Events.
type Recommendation struct {
	// CurrentReplicas echoes Input.CurrentReplicas.
	CurrentReplicas int32
	// DesiredReplicas is the replica count to set; equal to CurrentReplicas
	// when Rescale is false.
	DesiredReplicas int32
	// Rescale says whether the scale must be updated.
	Rescale bool
	// Reason explains the rescale, for the event: e.g. "cpu resource
	// utilization (percentage of request) above target".
	Reason string
	// Metric names the metric whose proposal was the highest, and
	// MetricTimestamp is the time of its value; for logs. Both are empty
	// when no metric was computed.
	Metric          string
	MetricTimestamp time.Time
	// MetricStatuses are the current values of the metrics, index by index
	// with Spec.Metrics (a metric that failed has an empty entry).
	MetricStatuses []autoscalingv2.MetricStatus
	// Status is the FederatedHPA status to write. When Rescale is set, it
	// is complete only after Rescaled or RescaleFailed.
	Status autoscalingv2.HorizontalPodAutoscalerStatus
	// Events are the events to record, in order.
	Events []Event
	// Err is set when some metric could not be computed. With Rescale false
	// and no usable metric, nothing was scaled; otherwise scaling went on
	// with the valid metrics. The controller reports it after writing the
	// status, as a failed sync.
	Err error

	// behavior is the effective behavior (nil without one), for the scale
	// event.
	behavior *autoscalingv2.HorizontalPodAutoscalerBehavior
}

// Rescaled records that the scale was updated to DesiredReplicas at now: it
// sets AbleToScale, the status replicas and lastScaleTime, stores the scale
// event in h, and returns the SuccessfulRescale event (also appended to
// Events).
func (r *Recommendation) Rescaled(h *History, now time.Time) Event {
	r.setCondition(autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonSucceededRescale,
		fmt.Sprintf("the HPA controller was able to update the target scale to %d", r.DesiredReplicas), now)
	h.RecordScaleEvent(r.behavior, r.CurrentReplicas, r.DesiredReplicas, now)
	// Without HPAScaleToZero, the ScaledToZero condition is never kept.
	r.Status.Conditions = removeCondition(r.Status.Conditions, autoscalingv2.ScaledToZero)
	r.Status.DesiredReplicas = r.DesiredReplicas
	lastScaleTime := metav1.NewTime(now)
	r.Status.LastScaleTime = &lastScaleTime
	e := Event{Type: corev1.EventTypeNormal, Reason: ReasonSuccessfulRescale,
		Message: fmt.Sprintf("New size: %d; reason: %s", r.DesiredReplicas, r.Reason)}
	r.Events = append(r.Events, e)
	return e
}

// RescaleFailed records that updating the scale failed with err: AbleToScale
// turns false, the status keeps its previous desired replicas, and it
// returns the FailedRescale event (also appended to Events).
func (r *Recommendation) RescaleFailed(err error, now time.Time) Event {
	r.setCondition(autoscalingv2.AbleToScale, corev1.ConditionFalse, ReasonFailedUpdateScale,
		fmt.Sprintf("the HPA controller was unable to update the target scale: %v", err), now)
	e := warning(ReasonFailedRescale, fmt.Sprintf("New size: %d; reason: %s; error: %v", r.DesiredReplicas, r.Reason, err))
	r.Events = append(r.Events, e)
	return e
}

func (r *Recommendation) setCondition(t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) {
	r.Status.Conditions = SetCondition(r.Status.Conditions, t, status, reason, message, now)
}

// Recommend runs one sync of the HPA algorithm for a FederatedHPA whose
// target scale was read: it returns the replica count to set, why, and the
// resulting status. It updates h (the recommendation history), and reads
// the clock only through now. Like upstream:
//   - a target scaled to zero disables autoscaling (HPAScaleToZero, alpha
//     and off by default, is not supported);
//   - a target outside [minReplicas, maxReplicas] is brought back into it
//     without reading metrics;
//   - otherwise the highest proposal of the metrics is stabilized and
//     limited: with a behavior, by its windows and policies (unset fields
//     defaulted with DefaultBehavior, except an unset scale-down window,
//     which is c.DownscaleStabilizationWindow as upstream); without one,
//     by a scale-down window of c.DownscaleStabilizationWindow and a
//     scale-up limit of max(2*current, 4) per sync. Either way the result
//     stays within [minReplicas, maxReplicas] (minReplicas defaults to 1).
func (c Config) Recommend(in Input, h *History, now time.Time) Recommendation {
	s := &recommender{cfg: c, in: &in, history: h, now: now, behavior: c.effectiveBehavior(in.Spec.Behavior)}
	s.rec = Recommendation{CurrentReplicas: in.CurrentReplicas, behavior: s.behavior}
	s.rec.Status = *in.Status.DeepCopy()
	s.setCondition(autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonSucceededGetScale, "the HPA controller was able to get the target's current scale")
	h.recordInitialRecommendation(in.CurrentReplicas, now)
	s.run()
	return s.rec
}

// recommender is the state of one Recommend call.
type recommender struct {
	cfg      Config
	in       *Input
	history  *History
	now      time.Time
	behavior *autoscalingv2.HorizontalPodAutoscalerBehavior
	rec      Recommendation
}

func (s *recommender) run() {
	current := s.in.CurrentReplicas
	minReplicas := s.minReplicas()
	switch {
	case current == 0:
		s.setCondition(autoscalingv2.ScalingActive, corev1.ConditionFalse, ReasonScalingDisabled, "scaling is disabled since the replica count of the target is zero")
		s.rec.Status.Conditions = removeCondition(s.rec.Status.Conditions, autoscalingv2.ScaledToZero)
		s.keepReplicas(nil)
	case current > s.in.Spec.MaxReplicas:
		s.rescale(s.in.Spec.MaxReplicas, "Current number of replicas above Spec.MaxReplicas", nil)
	case current < minReplicas:
		s.rescale(minReplicas, "Current number of replicas below Spec.MinReplicas", nil)
	default:
		s.scaleOnMetrics(minReplicas)
	}
}

func (s *recommender) minReplicas() int32 {
	if s.in.Spec.MinReplicas != nil {
		return *s.in.Spec.MinReplicas
	}
	return autoscalingv1alpha1.DefaultMinReplicas
}

// scaleOnMetrics computes the metrics' proposal, then stabilizes and
// limits it.
func (s *recommender) scaleOnMetrics(minReplicas int32) {
	current := s.in.CurrentReplicas
	proposal, statuses, err := s.computeReplicasForMetrics()
	s.rec.Err = err
	if proposal == nil {
		s.rec.Events = append(s.rec.Events, warning(ReasonFailedComputeMetricsReplicas, err.Error()))
		s.rec.DesiredReplicas = current
		s.setStatus(current, s.in.Status.DesiredReplicas, statuses)
		return
	}

	s.rec.Metric, s.rec.MetricTimestamp = proposal.name, proposal.timestamp
	var desired int32
	var reason, metric string
	if proposal.replicas > desired {
		desired, metric = proposal.replicas, proposal.name
	}
	if desired > current {
		reason = fmt.Sprintf("%s above target", metric)
	}
	if desired < current {
		reason = "All metrics below target"
	}
	if s.behavior == nil {
		desired = s.normalizeWithoutBehavior(current, desired, minReplicas)
	} else {
		desired = s.normalizeWithBehavior(current, desired, minReplicas)
	}
	if desired == current {
		s.keepReplicas(statuses)
		return
	}
	s.rescale(desired, reason, statuses)
}

// computeReplicasForMetrics returns the highest proposal of the metrics and
// their statuses. A nil proposal means no scaling: the selector is invalid,
// every metric failed, or some failed and the others ask for a scale-down.
// A non-nil error with a proposal reports the metrics that failed.
func (s *recommender) computeReplicasForMetrics() (*metricProposal, []autoscalingv2.MetricStatus, error) {
	if err := s.validateSelector(); err != nil {
		return nil, nil, err
	}
	specs := s.in.Spec.Metrics
	statuses := make([]autoscalingv2.MetricStatus, len(specs))
	calc := s.cfg.ReplicaCalculator(s.cfg.TolerancesFor(s.in.Spec.Behavior), s.now)
	var best *metricProposal
	var firstFailure *metricFailure
	failures := 0
	for i, spec := range specs {
		p, failure := computeMetric(spec, s.metricInput(&calc, i))
		if failure != nil {
			s.rec.Events = append(s.rec.Events, warning(failure.reason, failure.cause.Error()))
			if firstFailure == nil {
				firstFailure = failure
			}
			failures++
			continue
		}
		statuses[i] = p.status
		if best == nil || best.replicas == 0 || p.replicas > best.replicas {
			best = &p
		}
	}

	var err error
	if firstFailure != nil {
		err = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %v", failures, len(specs), firstFailure.err)
	}
	if failures >= len(specs) || (failures > 0 && best.replicas < s.in.CurrentReplicas) {
		if firstFailure != nil {
			c := firstFailure.condition()
			s.setCondition(c.Type, c.Status, c.Reason, c.Message)
		}
		if err == nil {
			err = errors.New("no metrics to compute the replica count from")
		}
		return nil, statuses, err
	}
	s.setCondition(autoscalingv2.ScalingActive, corev1.ConditionTrue, ReasonValidMetricFound,
		fmt.Sprintf("the HPA was able to successfully calculate a replica count from %s", best.name))
	return best, statuses, err
}

// validateSelector checks the target's selector: it must be set, parse, and
// match pods of no other FederatedHPA.
func (s *recommender) validateSelector() error {
	selector := s.in.Selector
	if selector == "" {
		s.rec.Events = append(s.rec.Events, warning(ReasonSelectorRequired, "selector is required"))
		s.setCondition(autoscalingv2.ScalingActive, corev1.ConditionFalse, ReasonInvalidSelector, "the HPA target's scale is missing a selector")
		return errors.New("selector is required")
	}
	if _, err := labels.Parse(selector); err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		s.rec.Events = append(s.rec.Events, warning(ReasonInvalidSelector, msg))
		s.setCondition(autoscalingv2.ScalingActive, corev1.ConditionFalse, ReasonInvalidSelector, msg)
		return errors.New(msg)
	}
	if owners := s.in.AutoscalersSelectingPods; len(owners) > 1 {
		msg := fmt.Sprintf("pods by selector %v are controlled by multiple HPAs: %v", selector, owners)
		s.rec.Events = append(s.rec.Events, warning(ReasonAmbiguousSelector, msg))
		s.setCondition(autoscalingv2.ScalingActive, corev1.ConditionFalse, ReasonAmbiguousSelector, msg)
		return errors.New(msg)
	}
	return nil
}

func (s *recommender) metricInput(calc *ReplicaCalculator, i int) metricInput {
	in := metricInput{
		calc:           calc,
		namespace:      s.in.Namespace,
		specReplicas:   s.in.CurrentReplicas,
		statusReplicas: s.in.StatusReplicas,
		pods:           s.in.Pods,
	}
	if i < len(s.in.Metrics) {
		in.data = s.in.Metrics[i]
	} else {
		in.data.Err = errors.New("no data was read for this metric")
	}
	return in
}

// normalizeWithoutBehavior stabilizes a scale-down over
// c.DownscaleStabilizationWindow and bounds the result.
func (s *recommender) normalizeWithoutBehavior(current, desired, minReplicas int32) int32 {
	stabilized := s.history.stabilizeDownscale(desired, s.cfg.DownscaleStabilizationWindow, s.now)
	if stabilized != desired {
		s.setCondition(autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonScaleDownStabilized,
			"recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		s.setCondition(autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonReadyForNewScale, "recommended size matches current size")
	}
	limited, reason, message := limitWithoutBehavior(current, stabilized, minReplicas, s.in.Spec.MaxReplicas)
	s.setScalingLimited(limited != stabilized, reason, message)
	return limited
}

// normalizeWithBehavior applies the behavior's stabilization windows, then
// its policies and the replica bounds.
func (s *recommender) normalizeWithBehavior(current, desired, minReplicas int32) int32 {
	b := s.behavior
	stabilized, reason, message := s.history.stabilizeWithBehavior(current, desired,
		seconds(*b.ScaleUp.StabilizationWindowSeconds), seconds(*b.ScaleDown.StabilizationWindowSeconds), s.now)
	if stabilized != desired {
		s.setCondition(autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, message)
	} else {
		s.setCondition(autoscalingv2.AbleToScale, corev1.ConditionTrue, ReasonReadyForNewScale, "recommended size matches current size")
	}
	limited, reason, message := s.history.limitWithBehavior(b, current, stabilized, minReplicas, s.in.Spec.MaxReplicas, s.now)
	s.setScalingLimited(limited != stabilized, reason, message)
	return limited
}

func (s *recommender) setScalingLimited(limited bool, reason, message string) {
	status := corev1.ConditionFalse
	if limited {
		status = corev1.ConditionTrue
	}
	s.setCondition(autoscalingv2.ScalingLimited, status, reason, message)
}

// rescale asks for the scale to be set to desired. Until the controller
// reports the outcome, the status keeps the previous desired replicas.
func (s *recommender) rescale(desired int32, reason string, statuses []autoscalingv2.MetricStatus) {
	s.rec.Rescale = true
	s.rec.DesiredReplicas = desired
	s.rec.Reason = reason
	s.setStatus(s.in.CurrentReplicas, s.in.Status.DesiredReplicas, statuses)
}

// keepReplicas leaves the scale as it is.
func (s *recommender) keepReplicas(statuses []autoscalingv2.MetricStatus) {
	s.rec.DesiredReplicas = s.in.CurrentReplicas
	s.setStatus(s.in.CurrentReplicas, s.in.CurrentReplicas, statuses)
}

// setStatus rebuilds the status as upstream does: replicas, metrics,
// conditions and lastScaleTime. observedGeneration carries over; the
// controller sets it.
func (s *recommender) setStatus(current, desired int32, statuses []autoscalingv2.MetricStatus) {
	s.rec.MetricStatuses = statuses
	s.rec.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: s.rec.Status.ObservedGeneration,
		LastScaleTime:      s.rec.Status.LastScaleTime,
		CurrentReplicas:    current,
		DesiredReplicas:    desired,
		CurrentMetrics:     statuses,
		Conditions:         s.rec.Status.Conditions,
	}
}

func (s *recommender) setCondition(t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, message string) {
	s.rec.setCondition(t, status, reason, message, s.now)
}
