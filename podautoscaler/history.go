package podautoscaler

import (
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// History is what the algorithm remembers of one FederatedHPA between
// syncs, which upstream keeps in the controller's memory: the recent
// unstabilized recommendations, for the stabilization windows, and the
// recent scale-ups and scale-downs, for the scaling policies.
//
// The controller keeps one History per FederatedHPA key, drops it when the
// FederatedHPA is deleted, and must not use one from two goroutines at
// once. The zero value is an empty history. Entries are never deleted;
// recording reuses the slot of an entry that has expired, which bounds the
// history to what one window or policy period can hold.
type History struct {
	recommendations []timestampedRecommendation
	scaleUpEvents   []scaleEvent
	scaleDownEvents []scaleEvent
}

type timestampedRecommendation struct {
	replicas  int32
	timestamp time.Time
}

type scaleEvent struct {
	// replicaChange is the absolute size of the change.
	replicaChange int32
	timestamp     time.Time
	// outdated events are older than the longest policy period: their
	// slot can be reused.
	outdated bool
}

// recordInitialRecommendation seeds an empty history with the current
// replica count, so that a new FederatedHPA does not scale down before a
// full stabilization window has passed.
func (h *History) recordInitialRecommendation(currentReplicas int32, now time.Time) {
	if h.recommendations == nil {
		h.recommendations = []timestampedRecommendation{{currentReplicas, now}}
	}
}

// recordRecommendation stores a recommendation at index (the slot of an
// expired one) or, with index -1, appends it.
func (h *History) recordRecommendation(index int, replicas int32, now time.Time) {
	r := timestampedRecommendation{replicas, now}
	if index >= 0 {
		h.recommendations[index] = r
		return
	}
	h.recommendations = append(h.recommendations, r)
}

// stabilizeDownscale applies the scale-down stabilization of a
// FederatedHPA without behavior: it returns the highest recommendation of
// the window, desired included, and records desired.
func (h *History) stabilizeDownscale(desired int32, window time.Duration, now time.Time) int32 {
	highest := desired
	expired := -1
	cutoff := now.Add(-window)
	for i, r := range h.recommendations {
		if r.timestamp.Before(cutoff) {
			expired = i
		} else if r.replicas > highest {
			highest = r.replicas
		}
	}
	h.recordRecommendation(expired, desired, now)
	return highest
}

// stabilizeWithBehavior applies both stabilization windows of a behavior:
// the count may not rise above the lowest recommendation of the scale-up
// window, nor fall below the highest of the scale-down window, and stays
// current if those bounds cross it. It records desired and returns the
// stabilized count with the AbleToScale reason and message to use if it
// differs from desired.
func (h *History) stabilizeWithBehavior(current, desired int32, upWindow, downWindow time.Duration, now time.Time) (int32, string, string) {
	upBound, downBound := desired, desired
	upCutoff, downCutoff := now.Add(-upWindow), now.Add(-downWindow)
	expired := -1
	for i, r := range h.recommendations {
		if r.timestamp.After(upCutoff) {
			upBound = min(upBound, r.replicas)
		}
		if r.timestamp.After(downCutoff) {
			downBound = max(downBound, r.replicas)
		}
		if r.timestamp.Before(upCutoff) && r.timestamp.Before(downCutoff) {
			expired = i
		}
	}
	stabilized := min(max(current, upBound), downBound)
	h.recordRecommendation(expired, desired, now)

	if desired >= current {
		return stabilized, ReasonScaleUpStabilized, "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return stabilized, ReasonScaleDownStabilized, "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// RecordScaleEvent remembers that the target was scaled from one count to
// another at now, for the scaling policies of behavior. Without a behavior
// nothing is recorded: no policy would read it. The controller calls it
// after a successful scale (Recommendation.Rescaled does).
func (h *History) RecordScaleEvent(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, from, to int32, now time.Time) {
	if behavior == nil {
		return
	}
	if to > from {
		h.scaleUpEvents = recordScaleEvent(h.scaleUpEvents, to-from, longestPolicyPeriod(behavior.ScaleUp), now)
	} else {
		h.scaleDownEvents = recordScaleEvent(h.scaleDownEvents, from-to, longestPolicyPeriod(behavior.ScaleDown), now)
	}
}

// recordScaleEvent marks the events older than the longest policy period
// outdated and stores the new event in the last outdated slot, or appends
// it.
func recordScaleEvent(events []scaleEvent, change int32, longestPeriod time.Duration, now time.Time) []scaleEvent {
	cutoff := now.Add(-longestPeriod)
	slot := -1
	for i := range events {
		if events[i].timestamp.Before(cutoff) {
			events[i].outdated = true
		}
		if events[i].outdated {
			slot = i
		}
	}
	e := scaleEvent{replicaChange: change, timestamp: now}
	if slot >= 0 {
		events[slot] = e
		return events
	}
	return append(events, e)
}

// longestPolicyPeriod returns the longest period of the rules' policies.
// Nil rules have none, as when scale-up rules are missing.
func longestPolicyPeriod(rules *autoscalingv2.HPAScalingRules) time.Duration {
	var longest int32
	if rules != nil {
		for _, p := range rules.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
	}
	return seconds(longest)
}

// replicasChangedWithin sums the changes of events newer than period.
func replicasChangedWithin(events []scaleEvent, period time.Duration, now time.Time) int32 {
	cutoff := now.Add(-period)
	var sum int32
	for _, e := range events {
		if e.timestamp.After(cutoff) {
			sum += e.replicaChange
		}
	}
	return sum
}

func seconds(s int32) time.Duration {
	return time.Duration(s) * time.Second
}
