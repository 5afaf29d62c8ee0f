package estimator

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelpers "k8s.io/component-helpers/resource"
	schedcorev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// unschedulableTaint is the taint a cordoned node (spec.unschedulable) is
// treated as carrying: a replica lands there only if it tolerates it.
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// NodeReplicas returns how many more replicas described by req the nodes
// can run, given the pods already bound to them: the sum over the nodes a
// replica may be placed on (Replica.Matches) of what each still fits
// (Replica.Fits). pods may hold pods of any node: each counts against the
// node named by its spec.nodeName, and unbound or terminal pods count
// nowhere. A nil req is a replica that requests nothing and may go to any
// schedulable node, so only free pod slots bound it.
func NodeReplicas(nodes []*corev1.Node, pods []*corev1.Pod, req *workv1alpha2.ReplicaRequirements) int64 {
	return nodeSum(nodes, pods, req).Replicas(Usage{})
}

// nodeSum adds up the nodes a replica described by req may be placed on,
// with the pods bound to each.
func nodeSum(nodes []*corev1.Node, pods []*corev1.Pod, req *workv1alpha2.ReplicaRequirements) *NodeSum {
	r := NewReplica(req)
	byNode := make(map[string][]*corev1.Pod, len(nodes))
	for _, p := range pods {
		if p != nil && p.Spec.NodeName != "" {
			byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
		}
	}
	sum := r.Sum()
	for _, n := range nodes {
		if r.Matches(n) {
			sum.Add(n, PodsUsage(byNode[n.Name]))
		}
	}
	return sum
}

// Replica is one replica's requirements prepared for checking many nodes:
// its node claim parsed and its requests converted once.
type Replica struct {
	affinity    nodeaffinity.RequiredNodeAffinity
	tolerations []corev1.Toleration
	request     []amount
}

// amount is a requested quantity of one resource, in the unit Fits divides
// in (value).
type amount struct {
	name  corev1.ResourceName
	value int64
}

// NewReplica prepares req (nil: no claim, no requests). Requests of zero,
// and of names a node does not account for (pods, or anything that is not
// cpu, memory, ephemeral-storage or a scalar resource such as hugepages or
// an extended resource), are dropped: they constrain nothing, as in
// Karmada's Resource.MaxDivided.
func NewReplica(req *workv1alpha2.ReplicaRequirements) *Replica {
	r := &Replica{}
	if req == nil {
		return r
	}
	if c := req.NodeClaim; c != nil {
		// The same parsing as the kube-scheduler's (and Karmada
		// estimator's) NodeAffinity filter, over a pod carrying the claim.
		pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: c.NodeSelector}}
		if c.HardNodeAffinity != nil {
			pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: c.HardNodeAffinity}}
		}
		r.affinity = nodeaffinity.GetRequiredNodeAffinity(pod)
		r.tolerations = c.Tolerations
	}
	for name, q := range req.ResourceRequest {
		if !nodeResource(name) {
			continue
		}
		if v := value(name, q); v > 0 {
			r.request = append(r.request, amount{name: name, value: v})
		}
	}
	return r
}

// Matches reports whether a replica may be placed on node at all: the node
// is Ready, it is not cordoned (spec.unschedulable) unless the replica
// tolerates node.kubernetes.io/unschedulable:NoSchedule, the replica
// tolerates every NoSchedule and NoExecute taint of the node, and the node
// satisfies the node selector and the required node affinity.
//
// Karmada's estimator applies the same checks except readiness, which it
// leaves to the not-ready taint the node lifecycle controller sets; a node
// that is not Ready is skipped here whatever the replica tolerates, since
// nothing new starts on it.
func (r *Replica) Matches(node *corev1.Node) bool {
	if node == nil || !ready(node) {
		return false
	}
	// Comparison operators (Lt, Gt) stay disabled, as in Karmada; with them
	// off, the logger is never used.
	logger := klog.Background()
	if node.Spec.Unschedulable && !schedcorev1.TolerationsTolerateTaint(logger, r.tolerations, &unschedulableTaint, false) {
		return false
	}
	if _, untolerated := schedcorev1.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, r.tolerations, doNotSchedule, false); untolerated {
		return false
	}
	// A term that does not parse does not match; the error adds nothing.
	ok, _ := r.affinity.Match(node)
	return ok
}

// doNotSchedule keeps the taints that keep new pods off a node.
func doNotSchedule(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

func ready(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Fits returns how many more replicas node has room for when used is what
// the pods bound to it request: min(free pod slots, floor(free/request)
// for every resource the replica requests), never negative. A resource the
// node does not list in status.allocatable is not free at all. Fits does
// not check Matches.
func (r *Replica) Fits(node *corev1.Node, used Usage) int64 {
	n, _ := r.fit(node, used, nil)
	return n
}

// fit returns Fits and the node's free pod slots (never negative); with
// free, it adds what the node has free of each resource the replica
// requests (r.request order, never negative) to it.
func (r *Replica) fit(node *corev1.Node, used Usage, free []int64) (fits, pods int64) {
	alloc := node.Status.Allocatable
	pods = alloc.Pods().Value() - used.pods
	n := pods
	for i, a := range r.request {
		var f int64
		if q, ok := alloc[a.name]; ok {
			f = value(a.name, q)
		}
		f -= used.requests[a.name]
		n = min(n, f/a.value)
		if free != nil {
			free[i] += max(f, 0)
		}
	}
	return max(n, 0), max(pods, 0)
}

// Usage is what a set of pods bound to one node takes of it: a pod slot
// each, and their requests. The zero Usage is an empty node.
type Usage struct {
	pods     int64
	requests map[corev1.ResourceName]int64
}

// Pods is the number of pods.
func (u Usage) Pods() int64 { return u.pods }

// Requests returns the pods' requests as quantities: cpu in millicores,
// memory, storage and hugepages in binary units, everything else decimal.
func (u Usage) Requests() corev1.ResourceList {
	out := make(corev1.ResourceList, len(u.requests))
	for name, v := range u.requests {
		switch {
		case name == corev1.ResourceCPU:
			out[name] = *resource.NewMilliQuantity(v, resource.DecimalSI)
		case name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage || strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			out[name] = *resource.NewQuantity(v, resource.BinarySI)
		default:
			out[name] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return out
}

// PodsUsage returns the usage of pods, which are bound to the same node;
// terminal pods (Succeeded, Failed) have released their share and are
// skipped. Each pod's requests are the kubelet's and kube-scheduler's
// (component-helpers PodRequests): pod-level requests when set, else the
// containers' sum raised to the largest init container (restartable init
// containers, sidecars, add up), plus the pod overhead.
func PodsUsage(pods []*corev1.Pod) Usage {
	u := Usage{requests: map[corev1.ResourceName]int64{}}
	var reuse corev1.ResourceList
	for _, p := range pods {
		if p == nil || terminal(p) {
			continue
		}
		u.pods++
		reuse = resourcehelpers.PodRequests(p, resourcehelpers.PodResourcesOptions{Reuse: reuse})
		for name, q := range reuse {
			u.requests[name] += value(name, q)
		}
	}
	return u
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// Value is q in the units a Usage counts in: millicores for cpu, whole
// units (rounded up) for everything else.
func Value(name corev1.ResourceName, q resource.Quantity) int64 { return value(name, q) }

// NewUsage returns the usage of no pod, to add pods to.
func NewUsage() Usage { return Usage{requests: map[corev1.ResourceName]int64{}} }

// AddPod counts one more pod, taking requests (in the units of Value).
func (u *Usage) AddPod(requests map[corev1.ResourceName]int64) {
	if u.requests == nil {
		u.requests = map[corev1.ResourceName]int64{}
	}
	u.pods++
	for name, v := range requests {
		u.requests[name] += v
	}
}

// value is q in the unit resources are divided in: millicores for cpu,
// whole units for everything else (as Karmada's and the kube-scheduler's
// Resource do).
func value(name corev1.ResourceName, q resource.Quantity) int64 {
	if name == corev1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// nodeResource reports whether a node accounts for name in its allocatable:
// cpu, memory, ephemeral-storage, or a scalar resource (hugepages-*,
// attachable-volumes-*, extended and kubernetes.io-prefixed resources,
// which all contain a slash).
func nodeResource(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return true
	}
	s := string(name)
	return strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, "attachable-volumes-") || strings.Contains(s, "/")
}
