package podautoscaler

import (
	"fmt"
	"math"
	"time"
)

// ObjectValue proposes replicas for an Object metric with a Value target:
// the ratio of value to target, times the ready pods. Its timestamp is zero,
// as upstream's.
func (c *ReplicaCalculator) ObjectValue(currentReplicas int32, targetValue, value int64, pods []Pod) (ValueProposal, error) {
	ratio := float64(value) / float64(targetValue)
	replicas, err := c.replicasForRatio(currentReplicas, ratio, pods)
	if err != nil {
		return ValueProposal{}, err
	}
	return ValueProposal{Replicas: replicas, Value: value}, nil
}

// ObjectAverageValue proposes replicas for an Object metric with an
// AverageValue target: the value divided by the target, unless that is
// within tolerance of statusReplicas (the pods that currently exist). The
// reported value is the average per existing pod.
func (c *ReplicaCalculator) ObjectAverageValue(statusReplicas int32, targetAverage, value int64, timestamp time.Time) ValueProposal {
	replicas := statusReplicas
	ratio := float64(value) / (float64(targetAverage) * float64(statusReplicas))
	if !c.Tolerances.Within(ratio) {
		replicas = int32(math.Ceil(float64(value) / float64(targetAverage)))
	}
	average := int64(math.Ceil(float64(value) / float64(statusReplicas)))
	return ValueProposal{Replicas: replicas, Value: average, Timestamp: timestamp}
}

// ExternalValue proposes replicas for an External metric with a Value
// target: the ratio of the summed series to the target, times the ready
// pods. Its timestamp is zero, as upstream's.
func (c *ReplicaCalculator) ExternalValue(currentReplicas int32, targetValue int64, values []int64, pods []Pod) (ValueProposal, error) {
	total := sumCapped(values)
	ratio := float64(total) / float64(targetValue)
	replicas, err := c.replicasForRatio(currentReplicas, ratio, pods)
	if err != nil {
		return ValueProposal{}, err
	}
	return ValueProposal{Replicas: replicas, Value: total}, nil
}

// ExternalAverageValue proposes replicas for an External metric with an
// AverageValue target, like ObjectAverageValue over the summed series.
func (c *ReplicaCalculator) ExternalAverageValue(statusReplicas int32, targetAverage int64, values []int64, timestamp time.Time) ValueProposal {
	total := sumUntilOverflow(values)
	replicas := statusReplicas
	ratio := float64(total) / (float64(targetAverage) * float64(statusReplicas))
	if !c.Tolerances.Within(ratio) {
		replicas = clampToInt32(math.Ceil(float64(total) / float64(targetAverage)))
	}
	average := int64(math.MaxInt64)
	if float64(total) < float64(math.MaxInt64) {
		average = int64(math.Ceil(float64(total) / float64(statusReplicas)))
	}
	return ValueProposal{Replicas: replicas, Value: average, Timestamp: timestamp}
}

// replicasForRatio scales the ready pods by ratio, unless ratio is within
// tolerance. From zero replicas it ignores pods and tolerance, so that a
// target scaled to zero can come back (HPAScaleToZero).
func (c *ReplicaCalculator) replicasForRatio(currentReplicas int32, ratio float64, pods []Pod) (int32, error) {
	if currentReplicas == 0 {
		return int32(math.Ceil(ratio)), nil
	}
	if c.Tolerances.Within(ratio) {
		return currentReplicas, nil
	}
	ready, err := readyPodCount(pods)
	if err != nil {
		return 0, fmt.Errorf("unable to calculate ready pods: %s", err)
	}
	return clampToInt32(ratio * float64(ready)), nil
}

// clampToInt32 rounds x up, capping it at the largest int32.
func clampToInt32(x float64) int32 {
	if x > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(math.Ceil(x))
}

// readyPodCount counts the running and ready pods.
func readyPodCount(pods []Pod) (int64, error) {
	if len(pods) == 0 {
		return 0, errNoPods
	}
	var n int64
	for i := range pods {
		if pods[i].runningAndReady() {
			n++
		}
	}
	return n, nil
}

// sumCapped adds values, stopping at math.MaxInt64 on a positive overflow.
func sumCapped(values []int64) int64 {
	var total int64
	for _, v := range values {
		if v > 0 && total > math.MaxInt64-v {
			return math.MaxInt64
		}
		total += v
	}
	return total
}

// sumUntilOverflow adds values and returns math.MaxInt64 as soon as the
// running total turns negative, which upstream takes for an overflow.
func sumUntilOverflow(values []int64) int64 {
	var total int64
	for _, v := range values {
		total += v
		if total < 0 {
			return math.MaxInt64
		}
	}
	return total
}
