package member

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelpers "k8s.io/component-helpers/resource"

	"github.com/flotilla-io/flotilla/estimator"
)

// Pod is what the hub keeps of a member pod: what cluster status, the
// replica estimate, FederatedHPA, the metrics adapter and the descheduler
// read, about a tenth of a trimmed corev1.Pod. The labels and the requests are interned:
// the pods of one workload share one copy. Everything is read-only.
type Pod struct {
	Namespace, Name, ResourceVersion string
	NodeName                         string
	Phase                            corev1.PodPhase
	// Ready is the status of the Ready condition, "" without one.
	Ready    corev1.ConditionStatus
	Deleting bool
	// readyTransition and startTime are Unix seconds (the API's
	// precision); 0: none.
	readyTransition, startTime int64
	// unschedulableSince is when the scheduler last found no node for the
	// pod (PodScheduled False, reason Unschedulable), in Unix seconds; 0:
	// it has not.
	unschedulableSince int64
	labels             *map[string]string
	shape              *podShape
}

// podShape is a pod's requests: the same for every pod of a workload.
type podShape struct {
	// containers are the app containers then the restartable init
	// (sidecar) containers, in spec order, with their requests in
	// milli-units: the containers a pod's utilization is computed from.
	containers []ContainerRequests
	// podLevel are spec.resources.requests in milli-units (nil: not set).
	podLevel map[corev1.ResourceName]int64
	// usage is what the pod takes of a node, in the estimator's units.
	usage map[corev1.ResourceName]int64
}

// ContainerRequests are one container's requests in milli-units.
type ContainerRequests struct {
	Name     string
	Requests map[corev1.ResourceName]int64
}

// Labels returns the pod's labels (shared: do not modify).
func (p *Pod) Labels() map[string]string {
	if p.labels == nil {
		return nil
	}
	return *p.labels
}

// ReadyTransition is when the Ready condition last changed (zero: never).
func (p *Pod) ReadyTransition() time.Time { return unixTime(p.readyTransition) }

// StartTime is when the kubelet acknowledged the pod (zero: not yet).
func (p *Pod) StartTime() time.Time { return unixTime(p.startTime) }

// UnschedulableSince is when the pod's PodScheduled condition became False
// with reason Unschedulable: the member's scheduler finds no node for it
// (zero: it is not so).
func (p *Pod) UnschedulableSince() time.Time { return unixTime(p.unschedulableSince) }

// Containers are the containers whose requests make the pod's (shared:
// do not modify).
func (p *Pod) Containers() []ContainerRequests { return p.shape.containers }

// PodLevelRequests are spec.resources.requests in milli-units, nil when
// the pod sets none (then the containers' requests count).
func (p *Pod) PodLevelRequests() map[corev1.ResourceName]int64 { return p.shape.podLevel }

// terminal reports whether the pod has finished and released its node.
func (p *Pod) terminal() bool { return p.Phase == corev1.PodSucceeded || p.Phase == corev1.PodFailed }

// GetObjectMeta makes a Pod keyable and indexable by namespace as an
// object (meta.Accessor).
func (p *Pod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, ResourceVersion: p.ResourceVersion, Labels: p.Labels()}
}

func unixTime(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0)
}

func unixSeconds(t *metav1.Time) int64 {
	if t == nil || t.IsZero() {
		return 0
	}
	return t.Unix()
}

// NewPod is what the hub keeps of p.
func NewPod(p *corev1.Pod) *Pod {
	out := &Pod{Namespace: p.Namespace, Name: p.Name, ResourceVersion: p.ResourceVersion, NodeName: p.Spec.NodeName,
		Phase: p.Status.Phase, Deleting: p.DeletionTimestamp != nil, startTime: unixSeconds(p.Status.StartTime)}
	for _, c := range p.Status.Conditions {
		switch {
		case c.Type == corev1.PodReady:
			out.Ready, out.readyTransition = c.Status, unixSeconds(&c.LastTransitionTime)
		case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable:
			out.unschedulableSince = unixSeconds(&c.LastTransitionTime)
		}
	}
	if len(p.Labels) > 0 {
		out.labels = labelSets.get(labelsKey(p.Labels), func() *map[string]string {
			l := maps.Clone(p.Labels)
			return &l
		})
	}
	out.shape = shapes.get(shapeKey(p), func() *podShape { return newShape(p) })
	return out
}

func newShape(p *corev1.Pod) *podShape {
	s := &podShape{}
	for i := range p.Spec.Containers {
		s.containers = append(s.containers, ContainerRequests{Name: p.Spec.Containers[i].Name, Requests: milli(p.Spec.Containers[i].Resources.Requests)})
	}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			s.containers = append(s.containers, ContainerRequests{Name: c.Name, Requests: milli(c.Resources.Requests)})
		}
	}
	total := resourcehelpers.PodRequests(p, resourcehelpers.PodResourcesOptions{})
	if resourcehelpers.IsPodLevelRequestsSet(p) {
		s.podLevel = milli(total)
	}
	s.usage = make(map[corev1.ResourceName]int64, len(total))
	for name, q := range total {
		s.usage[name] = estimator.Value(name, q)
	}
	return s
}

func milli(l corev1.ResourceList) map[corev1.ResourceName]int64 {
	if l == nil {
		return nil
	}
	out := make(map[corev1.ResourceName]int64, len(l))
	for name, q := range l {
		out[name] = q.MilliValue()
	}
	return out
}

// labelsKey is labels in a canonical form.
func labelsKey(l map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// shapeKey is what a pod's requests are computed from, in a canonical
// form: containers (name, restart policy, requests), init containers, the
// pod-level requests and the overhead.
func shapeKey(p *corev1.Pod) string {
	var b strings.Builder
	list := func(l corev1.ResourceList) {
		for _, name := range slices.Sorted(maps.Keys(l)) {
			q := l[name]
			b.WriteString(string(name))
			b.WriteByte('=')
			b.WriteString(strconv.FormatInt(q.MilliValue(), 10))
			b.WriteByte(';')
		}
		b.WriteByte('|')
	}
	containers := func(cs []corev1.Container) {
		for i := range cs {
			b.WriteString(cs[i].Name)
			if cs[i].RestartPolicy != nil {
				b.WriteString("/" + string(*cs[i].RestartPolicy))
			}
			b.WriteByte(':')
			list(cs[i].Resources.Requests)
		}
		b.WriteByte('#')
	}
	containers(p.Spec.Containers)
	containers(p.Spec.InitContainers)
	if p.Spec.Resources != nil {
		list(p.Spec.Resources.Requests)
	}
	b.WriteByte('#')
	list(p.Spec.Overhead)
	return b.String()
}

// interner hands out one shared copy per key, held weakly: a copy no pod
// holds any more is collected, and its entry dropped at the next sweep.
type interner[T any] struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[T]
	// swept is the size of m after the last sweep.
	swept int
}

var (
	labelSets = &interner[map[string]string]{m: map[string]weak.Pointer[map[string]string]{}}
	shapes    = &interner[podShape]{m: map[string]weak.Pointer[podShape]{}}
)

func (in *interner[T]) get(key string, build func() *T) *T {
	in.mu.Lock()
	defer in.mu.Unlock()
	if w, ok := in.m[key]; ok {
		if v := w.Value(); v != nil {
			return v
		}
	}
	v := build()
	in.m[key] = weak.Make(v)
	if len(in.m) > 2*in.swept+1024 {
		for k, w := range in.m {
			if w.Value() == nil {
				delete(in.m, k)
			}
		}
		in.swept = len(in.m)
	}
	return v
}
