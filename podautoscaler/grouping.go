package podautoscaler

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// podGroups sorts the target's pods by how their samples are used.
type podGroups struct {
	// readyCount counts the pods whose samples are trusted as they are.
	readyCount int
	// unready pods have samples that are dropped, and count as using
	// nothing when the metric asks for a scale-up: pending pods and, for
	// CPU, pods still initializing.
	unready sets.Set[PodKey]
	// missing pods have no sample: on a scale-down they count as using
	// their target, on a scale-up as using nothing.
	missing sets.Set[PodKey]
	// ignored pods (failed, or being deleted) do not count at all.
	ignored sets.Set[PodKey]
}

// groupPods sorts pods against the samples of resource ("" for a custom
// metric). Only CPU samples are checked for pod readiness, because CPU
// usage at startup is not representative.
func (c *ReplicaCalculator) groupPods(pods []Pod, samples PodMetrics, resource corev1.ResourceName) podGroups {
	g := podGroups{unready: sets.New[PodKey](), missing: sets.New[PodKey](), ignored: sets.New[PodKey]()}
	for i := range pods {
		pod := &pods[i]
		key := pod.Key()
		if pod.Deleting || pod.Phase == corev1.PodFailed {
			g.ignored.Insert(key)
			continue
		}
		if pod.Phase == corev1.PodPending {
			g.unready.Insert(key)
			continue
		}
		sample, found := samples[key]
		if !found {
			g.missing.Insert(key)
			continue
		}
		if resource == corev1.ResourceCPU && c.cpuSampleUntrusted(pod, sample) {
			g.unready.Insert(key)
			continue
		}
		g.readyCount++
	}
	return g
}

// cpuSampleUntrusted reports whether a running pod's CPU sample must be set
// aside. A pod without a Ready condition or a start time is not trusted.
// During the initialization period after its start, a pod is trusted only
// when ready and when a whole metric window was collected since it became
// ready. After that period, only a pod that is not ready and has never been
// ready (it turned unready within the initial readiness delay after its
// start) is set aside.
func (c *ReplicaCalculator) cpuSampleUntrusted(pod *Pod, sample PodMetric) bool {
	if pod.Ready == "" || pod.StartTime.IsZero() {
		return true
	}
	if pod.StartTime.Add(c.CPUInitializationPeriod).After(c.Now) {
		return pod.Ready == corev1.ConditionFalse || sample.Timestamp.Before(pod.ReadyTransition.Add(sample.Window))
	}
	return pod.Ready == corev1.ConditionFalse && pod.StartTime.Add(c.DelayOfInitialReadinessStatus).After(pod.ReadyTransition)
}

// usableSamples returns a copy of samples without those of unready and
// ignored pods: the caller's map is never modified.
func (g *podGroups) usableSamples(samples PodMetrics) PodMetrics {
	out := make(PodMetrics, len(samples))
	for key, s := range samples {
		if !g.unready.Has(key) && !g.ignored.Has(key) {
			out[key] = s
		}
	}
	return out
}

// podRequests returns the request of resource of every pod (ignored ones
// included, as upstream), in milli-units. With a container name it is that
// container's request; without one it is the pod-level request if the pod
// sets pod-level requests, else the sum over its containers.
func podRequests(pods []Pod, container string, resource corev1.ResourceName) (map[PodKey]int64, error) {
	requests := make(map[PodKey]int64, len(pods))
	for i := range pods {
		pod := &pods[i]
		var request int64
		var err error
		if pod.PodRequests != nil && container == "" {
			request, err = podLevelRequest(pod, resource)
		} else {
			request, err = containerRequests(pod, container, resource)
		}
		if err != nil {
			return nil, err
		}
		requests[pod.Key()] = request
	}
	return requests, nil
}

func podLevelRequest(pod *Pod, resource corev1.ResourceName) (int64, error) {
	request, ok := pod.PodRequests[resource]
	if !ok {
		return 0, fmt.Errorf("missing pod-level request for %s in Pod %s", resource, pod.Name)
	}
	return request, nil
}

func containerRequests(pod *Pod, container string, resource corev1.ResourceName) (int64, error) {
	var sum int64
	for _, c := range pod.Containers {
		if container != "" && c.Name != container {
			continue
		}
		request, ok := c.Requests[resource]
		if !ok {
			return 0, fmt.Errorf("missing request for %s in container %s of Pod %s", resource, c.Name, pod.Name)
		}
		if container != "" {
			return request, nil // container names are unique within a pod
		}
		sum += request
	}
	if container != "" {
		return 0, fmt.Errorf("container %s not found in Pod %s", container, pod.Name)
	}
	return sum, nil
}
