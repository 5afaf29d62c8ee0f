package podautoscaler

import (
	"errors"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
)

var (
	errNoPods = errors.New("no pods returned by selector while calculating replica count")
	// errNoUsableSamples is returned when every sample belongs to an
	// unready or ignored pod.
	errNoUsableSamples = errors.New("did not receive metrics for targeted pods (pods might be unready)")
	// errNoMatchingSamples is returned when no sample belongs to a pod with
	// a request.
	errNoMatchingSamples = errors.New("no metrics returned matched known pods")
)

// ReplicaCalculator computes, for one metric, the replica count that would
// bring the metric to its target: upstream's ReplicaCalculator, over the
// pods of every member cluster. All values are in milli-units.
type ReplicaCalculator struct {
	Tolerances                    Tolerances
	CPUInitializationPeriod       time.Duration
	DelayOfInitialReadinessStatus time.Duration
	// Now is the time of the computation, against which pod start times
	// are compared.
	Now time.Time
}

// UtilizationProposal is the outcome of a Utilization target.
type UtilizationProposal struct {
	Replicas int32
	// Utilization is the usage of the pods with a usable sample, in percent
	// of their requests.
	Utilization int32
	// AverageValue is their average usage.
	AverageValue int64
	Timestamp    time.Time
}

// ValueProposal is the outcome of a Value or AverageValue target.
type ValueProposal struct {
	Replicas int32
	// Value is the current value, or average value per pod, of the metric.
	Value     int64
	Timestamp time.Time
}

// ResourceUtilization proposes replicas for a resource (or, with a
// container name, a container resource) whose target is an average
// utilization in percent of the pods' requests.
func (c *ReplicaCalculator) ResourceUtilization(currentReplicas, targetUtilization int32, resource corev1.ResourceName, container string, pods []Pod, samples PodMetrics) (UtilizationProposal, error) {
	if len(pods) == 0 {
		return UtilizationProposal{}, errNoPods
	}
	groups := c.groupPods(pods, samples, resource)
	usable := groups.usableSamples(samples)
	if len(usable) == 0 {
		return UtilizationProposal{}, errNoUsableSamples
	}
	requests, err := podRequests(pods, container, resource)
	if err != nil {
		return UtilizationProposal{}, err
	}
	model := utilizationModel{requests: requests, target: targetUtilization}
	current, err := model.measure(usable)
	if err != nil {
		return UtilizationProposal{}, err
	}
	replicas, err := c.rebalance(currentReplicas, current.ratio, groups, usable, model)
	if err != nil {
		return UtilizationProposal{}, err
	}
	return UtilizationProposal{
		Replicas:     replicas,
		Utilization:  current.utilization,
		AverageValue: current.average,
		Timestamp:    samples.oldestTimestamp(),
	}, nil
}

// ResourceAverageValue proposes replicas for a resource (or container
// resource) whose target is an average usage per pod.
func (c *ReplicaCalculator) ResourceAverageValue(currentReplicas int32, targetAverage int64, resource corev1.ResourceName, pods []Pod, samples PodMetrics) (ValueProposal, error) {
	return c.averagePerPod(currentReplicas, targetAverage, resource, pods, samples)
}

// PodsAverageValue proposes replicas for a Pods metric, whose target is an
// average value per pod. Readiness is not checked: it only matters for CPU.
func (c *ReplicaCalculator) PodsAverageValue(currentReplicas int32, targetAverage int64, pods []Pod, samples PodMetrics) (ValueProposal, error) {
	return c.averagePerPod(currentReplicas, targetAverage, "", pods, samples)
}

func (c *ReplicaCalculator) averagePerPod(currentReplicas int32, targetAverage int64, resource corev1.ResourceName, pods []Pod, samples PodMetrics) (ValueProposal, error) {
	if len(pods) == 0 {
		return ValueProposal{}, errNoPods
	}
	groups := c.groupPods(pods, samples, resource)
	usable := groups.usableSamples(samples)
	if len(usable) == 0 {
		return ValueProposal{}, errNoUsableSamples
	}
	model := averageModel{target: targetAverage}
	current, _ := model.measure(usable)
	replicas, err := c.rebalance(currentReplicas, current.ratio, groups, usable, model)
	if err != nil {
		return ValueProposal{}, err
	}
	return ValueProposal{Replicas: replicas, Value: current.average, Timestamp: samples.oldestTimestamp()}, nil
}

// rebalance turns the usage ratio of the usable samples into a replica
// count. With unready pods (on a scale-up) or pods without a sample, it
// assumes conservative values for them: pods without a sample use their
// target on a scale-down and nothing on a scale-up; unready pods use nothing
// on a scale-up. It keeps the current count when the ratio so recomputed is
// within tolerance, flips direction, or would move the count the other way.
// It writes the assumed samples into usable.
func (c *ReplicaCalculator) rebalance(currentReplicas int32, ratio float64, g podGroups, usable PodMetrics, model usageModel) (int32, error) {
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if c.Tolerances.Within(ratio) {
			return currentReplicas, nil
		}
		return int32(math.Ceil(ratio * float64(g.readyCount))), nil
	}

	for key := range g.missing {
		switch {
		case ratio < 1.0:
			usable[key] = PodMetric{Value: model.scaleDownAssumption(key)}
		case ratio > 1.0:
			usable[key] = PodMetric{Value: 0}
		}
	}
	if scaleUpWithUnready {
		for key := range g.unready {
			usable[key] = PodMetric{Value: 0}
		}
	}

	rebalanced, err := model.measure(usable)
	if err != nil {
		return 0, err
	}
	newRatio := rebalanced.ratio
	if c.Tolerances.Within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		return currentReplicas, nil
	}
	newReplicas := int32(math.Ceil(newRatio * float64(len(usable))))
	if (newRatio < 1.0 && newReplicas > currentReplicas) || (newRatio > 1.0 && newReplicas < currentReplicas) {
		return currentReplicas, nil
	}
	return newReplicas, nil
}

// usage is a measure of samples against a target.
type usage struct {
	// ratio is current over target.
	ratio float64
	// utilization is the usage in percent of the requests (utilization
	// targets only).
	utilization int32
	// average is the average sample value.
	average int64
}

// usageModel measures samples against one kind of target.
type usageModel interface {
	measure(samples PodMetrics) (usage, error)
	// scaleDownAssumption is the value assumed for a pod without a sample
	// when the metric asks for a scale-down.
	scaleDownAssumption(pod PodKey) int64
}

// utilizationModel measures usage in percent of the pods' requests.
type utilizationModel struct {
	requests map[PodKey]int64
	target   int32
}

// measure sums the samples of pods with a request (samples of other pods
// are extraneous) and compares their utilization, truncated to a whole
// percent, with the target.
func (m utilizationModel) measure(samples PodMetrics) (usage, error) {
	var total, requested int64
	var n int64
	for key, s := range samples {
		request, ok := m.requests[key]
		if !ok {
			continue
		}
		total += s.Value
		requested += request
		n++
	}
	if requested == 0 {
		return usage{}, errNoMatchingSamples
	}
	utilization := int32(total * 100 / requested)
	return usage{
		ratio:       float64(utilization) / float64(m.target),
		utilization: utilization,
		average:     total / n,
	}, nil
}

// scaleDownAssumption is the pod's full request, or the target share of it
// when the target is above 100%.
func (m utilizationModel) scaleDownAssumption(pod PodKey) int64 {
	return m.requests[pod] * int64(max(100, m.target)) / 100
}

// averageModel measures the average sample value per pod.
type averageModel struct {
	target int64
}

func (m averageModel) measure(samples PodMetrics) (usage, error) {
	var total int64
	for _, s := range samples {
		total += s.Value
	}
	average := total / int64(len(samples))
	return usage{ratio: float64(average) / float64(m.target), average: average}, nil
}

func (m averageModel) scaleDownAssumption(PodKey) int64 {
	return m.target
}
