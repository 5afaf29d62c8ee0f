package podautoscaler

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// testNow is the clock of every test.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Start times of upstream's tests: a "hot" pod just started and is within
// its CPU initialization period; a "cool" one started 3 minutes ago.
var (
	hot  = testNow
	cool = testNow.Add(-3 * time.Minute)
)

// Upstream's testing settings (replica_calculator.go).
const (
	testingTolerance                     = 0.1
	testingCPUInitializationPeriod       = 2 * time.Minute
	testingDelayOfInitialReadinessStatus = 10 * time.Second
)

func testingConfig() Config {
	return Config{
		Tolerance:                     testingTolerance,
		CPUInitializationPeriod:       testingCPUInitializationPeriod,
		DelayOfInitialReadinessStatus: testingDelayOfInitialReadinessStatus,
		DownscaleStabilizationWindow:  5 * time.Minute,
	}
}

func testingCalculator(tol *Tolerances) ReplicaCalculator {
	t := Tolerances{ScaleDown: testingTolerance, ScaleUp: testingTolerance}
	if tol != nil {
		t = *tol
	}
	return testingConfig().ReplicaCalculator(t, testNow)
}

const testCluster = "member1"

// podName names the i-th pod as upstream's tests do.
func podName(i int) string { return fmt.Sprintf("test-pod-%d", i) }

func podKey(i int) PodKey {
	return PodKey{Cluster: testCluster, Namespace: "test-namespace", Name: podName(i)}
}

// podSet describes the pods of a scenario the way upstream's test harness
// does: n pods, by default running, ready, started 3 minutes ago and with
// two containers "container1" and "container2" that request nothing.
type podSet struct {
	n         int
	readiness []corev1.ConditionStatus
	starts    []time.Time
	phases    []corev1.PodPhase
	deleting  []bool
	// requests holds the per-container request of pod i (both containers
	// request it); later pods have no requests.
	requests []int64
	resource corev1.ResourceName
}

func (s podSet) build() []Pod {
	n := max(s.n, len(s.phases))
	pods := make([]Pod, n)
	for i := range pods {
		p := Pod{
			Cluster: testCluster, Namespace: "test-namespace", Name: podName(i),
			Phase: corev1.PodRunning, Ready: corev1.ConditionTrue, StartTime: cool,
			Containers: []Container{{Name: "container1"}, {Name: "container2"}},
		}
		if i < len(s.readiness) {
			p.Ready = s.readiness[i]
		}
		if i < len(s.starts) {
			p.StartTime = s.starts[i]
		}
		if i < len(s.phases) {
			p.Phase = s.phases[i]
		}
		if i < len(s.deleting) {
			p.Deleting = s.deleting[i]
		}
		if i < len(s.requests) {
			for c := range p.Containers {
				p.Containers[c].Requests = map[corev1.ResourceName]int64{s.resource: s.requests[i]}
			}
		}
		pods[i] = p
	}
	return pods
}

// containerSamples turns per-container usage levels into the samples
// upstream's metrics client makes of them: with no container, the pod's sum
// when both containers report; with a container, that container's usage.
// Sample timestamps are zero, as in upstream's tests, with a 1-minute window.
func containerSamples(levels [][]int64, container string, names []string) PodMetrics {
	samples := PodMetrics{}
	for i, level := range levels {
		key := podKey(i)
		if i < len(names) {
			key.Name = names[i]
		}
		var value int64
		switch container {
		case "":
			if len(level) < 2 {
				continue
			}
			value = level[0] + level[1]
		default:
			var index int
			if _, err := fmt.Sscanf(container, "container%d", &index); err != nil || index > len(level) {
				continue
			}
			value = level[index-1]
		}
		samples[key] = PodMetric{Window: time.Minute, Value: value}
	}
	return samples
}

// levels gives both containers of each pod the same usage, as upstream's
// makePodMetricLevels.
func levels(perContainer ...int64) [][]int64 {
	out := make([][]int64, len(perContainer))
	for i, v := range perContainer {
		out[i] = []int64{v, v}
	}
	return out
}

// podSamples gives pod i the sample value values[i].
func podSamples(values ...int64) PodMetrics {
	samples := PodMetrics{}
	for i, v := range values {
		samples[podKey(i)] = PodMetric{Window: time.Minute, Value: v}
	}
	return samples
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func conditions(statuses ...corev1.ConditionStatus) []corev1.ConditionStatus { return statuses }

func phases(p ...corev1.PodPhase) []corev1.PodPhase { return p }

const (
	T = corev1.ConditionTrue
	F = corev1.ConditionFalse
)
