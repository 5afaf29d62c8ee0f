package podautoscaler

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcehelpers "k8s.io/component-helpers/resource"
)

// PodKey names a pod across member clusters: pods of different clusters may
// share a namespace and a name.
type PodKey struct {
	Cluster   string
	Namespace string
	Name      string
}

// String returns cluster/namespace/name.
func (k PodKey) String() string {
	return k.Cluster + "/" + k.Namespace + "/" + k.Name
}

// Pod is what the algorithm needs to know of one pod of the scale target, in
// any member cluster. NewPod builds it from a corev1.Pod.
type Pod struct {
	Cluster   string
	Namespace string
	Name      string

	Phase corev1.PodPhase
	// Deleting is true once the pod has a deletion timestamp.
	Deleting bool
	// Ready is the status of the pod's Ready condition, or "" when the pod
	// has no Ready condition.
	Ready corev1.ConditionStatus
	// ReadyTransition is the last transition time of the Ready condition.
	ReadyTransition time.Time
	// StartTime is when the kubelet acknowledged the pod; zero if not yet.
	StartTime time.Time

	// Containers are the app containers followed by the restartable init
	// (sidecar) containers, in spec order: the containers whose requests
	// count towards the pod's request.
	Containers []Container
	// PodRequests holds, in milli-units, the requests of the whole pod as
	// the kubelet computes them when the pod sets pod-level requests
	// (spec.resources.requests); nil when it sets none. When set, they take
	// the place of the summed container requests (KEP-2837).
	PodRequests map[corev1.ResourceName]int64
}

// Container is one container that counts towards the pod's requests.
type Container struct {
	Name string
	// Requests holds the container's requests in milli-units.
	Requests map[corev1.ResourceName]int64
}

// Key returns the pod's cluster-qualified key.
func (p *Pod) Key() PodKey {
	return PodKey{Cluster: p.Cluster, Namespace: p.Namespace, Name: p.Name}
}

// runningAndReady reports whether the pod counts as a ready replica for
// Object and External metrics with a Value target.
func (p *Pod) runningAndReady() bool {
	return p.Phase == corev1.PodRunning && p.Ready == corev1.ConditionTrue
}

// PodMetric is one sample of a per-pod metric (a resource usage or a custom
// Pods metric), in milli-units.
type PodMetric struct {
	// Timestamp is when the sample was taken (the end of its window).
	Timestamp time.Time
	// Window is the period the sample covers (metrics-server: its scrape
	// resolution; custom metrics: windowSeconds, or one minute if unset).
	Window time.Duration
	Value  int64
}

// PodMetrics maps pods to their sample of one metric. It may hold samples of
// pods that are not in the pod list (the algorithm keeps them, as upstream
// does) and lack samples of pods that are.
type PodMetrics map[PodKey]PodMetric

// oldestTimestamp returns the earliest sample time, the "associated oldest
// timestamp" upstream's metrics client promises for a read. It is only
// reported, never used to decide anything.
func (m PodMetrics) oldestTimestamp() time.Time {
	var oldest time.Time
	for _, s := range m {
		if oldest.IsZero() || s.Timestamp.Before(oldest) {
			oldest = s.Timestamp
		}
	}
	return oldest
}

// NewPod converts a member cluster's pod.
func NewPod(cluster string, pod *corev1.Pod) Pod {
	p := Pod{
		Cluster:   cluster,
		Namespace: pod.Namespace,
		Name:      pod.Name,
		Phase:     pod.Status.Phase,
		Deleting:  pod.DeletionTimestamp != nil,
	}
	if pod.Status.StartTime != nil {
		p.StartTime = pod.Status.StartTime.Time
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			p.Ready = c.Status
			p.ReadyTransition = c.LastTransitionTime.Time
			break
		}
	}
	for i := range pod.Spec.Containers {
		p.Containers = append(p.Containers, newContainer(&pod.Spec.Containers[i]))
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			p.Containers = append(p.Containers, newContainer(c))
		}
	}
	if resourcehelpers.IsPodLevelRequestsSet(pod) {
		p.PodRequests = milliValues(resourcehelpers.PodRequests(pod, resourcehelpers.PodResourcesOptions{}))
	}
	return p
}

func newContainer(c *corev1.Container) Container {
	return Container{Name: c.Name, Requests: milliValues(c.Resources.Requests)}
}

func milliValues(list corev1.ResourceList) map[corev1.ResourceName]int64 {
	if list == nil {
		return nil
	}
	out := make(map[corev1.ResourceName]int64, len(list))
	for name, q := range list {
		out[name] = q.MilliValue()
	}
	return out
}
