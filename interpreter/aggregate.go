package interpreter

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// Aggregate hooks receive a copy of the template that they may modify and
// return. When nothing changes they return it as is.

// memberStatus decodes an item's reflected status; false when there is none.
func memberStatus(item workv1alpha2.AggregatedStatusItem, out interface{}) (bool, error) {
	if item.Status == nil || len(item.Status.Raw) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(item.Status.Raw, out); err != nil {
		return false, fmt.Errorf("decoding status of cluster %s: %w", item.ClusterName, err)
	}
	return true, nil
}

// caughtUp tells whether a member has observed its own latest generation
// and was built from the latest template generation.
func caughtUp(fg FederatedGeneration, observedGeneration, templateGeneration int64) bool {
	return observedGeneration >= fg.Generation && fg.ResourceTemplateGeneration >= templateGeneration
}

// aggregatedObservedGeneration is the template generation when every item
// (including items without a status) has caught up, else old.
func aggregatedObservedGeneration(upToDate, items int, templateGeneration, old int64) int64 {
	if upToDate == items {
		return templateGeneration
	}
	return old
}

func aggregateDeployment(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old appsv1.DeploymentStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	sum := appsv1.DeploymentStatus{}
	upToDate := 0
	for _, item := range items {
		var m WrappedDeploymentStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		sum.Replicas += m.Replicas
		sum.ReadyReplicas += m.ReadyReplicas
		sum.UpdatedReplicas += m.UpdatedReplicas
		sum.AvailableReplicas += m.AvailableReplicas
		sum.UnavailableReplicas += m.UnavailableReplicas
		if caughtUp(m.FederatedGeneration, m.ObservedGeneration, obj.GetGeneration()) {
			upToDate++
		}
	}
	next := old
	next.ObservedGeneration = aggregatedObservedGeneration(upToDate, len(items), obj.GetGeneration(), old.ObservedGeneration)
	next.Replicas, next.ReadyReplicas, next.UpdatedReplicas = sum.Replicas, sum.ReadyReplicas, sum.UpdatedReplicas
	next.AvailableReplicas, next.UnavailableReplicas = sum.AvailableReplicas, sum.UnavailableReplicas
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "replicas", "readyReplicas", "updatedReplicas", "availableReplicas", "unavailableReplicas", "observedGeneration")
}

func aggregateReplicaSet(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old appsv1.ReplicaSetStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := old
	next.Replicas, next.ReadyReplicas, next.AvailableReplicas = 0, 0, 0
	upToDate := 0
	for _, item := range items {
		var m WrappedReplicaSetStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.Replicas += m.Replicas
		next.ReadyReplicas += m.ReadyReplicas
		next.AvailableReplicas += m.AvailableReplicas
		if caughtUp(m.FederatedGeneration, m.ObservedGeneration, obj.GetGeneration()) {
			upToDate++
		}
	}
	next.ObservedGeneration = aggregatedObservedGeneration(upToDate, len(items), obj.GetGeneration(), old.ObservedGeneration)
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "replicas", "readyReplicas", "availableReplicas", "observedGeneration")
}

func aggregateStatefulSet(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old appsv1.StatefulSetStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := old
	next.AvailableReplicas, next.CurrentReplicas, next.ReadyReplicas, next.Replicas, next.UpdatedReplicas = 0, 0, 0, 0, 0
	upToDate := 0
	for _, item := range items {
		var m WrappedStatefulSetStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.AvailableReplicas += m.AvailableReplicas
		next.CurrentReplicas += m.CurrentReplicas
		next.ReadyReplicas += m.ReadyReplicas
		next.Replicas += m.Replicas
		next.UpdatedReplicas += m.UpdatedReplicas
		if caughtUp(m.FederatedGeneration, m.ObservedGeneration, obj.GetGeneration()) {
			upToDate++
		}
	}
	next.ObservedGeneration = aggregatedObservedGeneration(upToDate, len(items), obj.GetGeneration(), old.ObservedGeneration)
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "availableReplicas", "currentReplicas", "readyReplicas", "replicas", "updatedReplicas", "observedGeneration")
}

func aggregateDaemonSet(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old appsv1.DaemonSetStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := old
	next.CurrentNumberScheduled, next.DesiredNumberScheduled, next.NumberAvailable = 0, 0, 0
	next.NumberMisscheduled, next.NumberReady, next.UpdatedNumberScheduled, next.NumberUnavailable = 0, 0, 0, 0
	upToDate := 0
	for _, item := range items {
		var m WrappedDaemonSetStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.CurrentNumberScheduled += m.CurrentNumberScheduled
		next.DesiredNumberScheduled += m.DesiredNumberScheduled
		next.NumberAvailable += m.NumberAvailable
		next.NumberMisscheduled += m.NumberMisscheduled
		next.NumberReady += m.NumberReady
		next.UpdatedNumberScheduled += m.UpdatedNumberScheduled
		next.NumberUnavailable += m.NumberUnavailable
		if caughtUp(m.FederatedGeneration, m.ObservedGeneration, obj.GetGeneration()) {
			upToDate++
		}
	}
	next.ObservedGeneration = aggregatedObservedGeneration(upToDate, len(items), obj.GetGeneration(), old.ObservedGeneration)
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled", "numberReady", "updatedNumberScheduled", "numberUnavailable", "observedGeneration")
}

// aggregateService concatenates, de-duplicates and sorts the members' load
// balancer ingresses; only LoadBalancer services are aggregated.
func aggregateService(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if t, _, _ := unstructured.NestedString(obj.Object, "spec", "type"); t != string(corev1.ServiceTypeLoadBalancer) {
		return obj, nil
	}
	var old corev1.ServiceStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	var all []corev1.LoadBalancerIngress
	for _, item := range items {
		var m corev1.ServiceStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if ok {
			all = append(all, m.LoadBalancer.Ingress...)
		}
	}
	next := old
	next.LoadBalancer.Ingress = dedupSort(all, func(i corev1.LoadBalancerIngress) (string, string) { return i.IP, i.Hostname })
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "loadBalancer")
}

// aggregateIngress is aggregateService for Ingress.
func aggregateIngress(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old networkingv1.IngressStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	var all []networkingv1.IngressLoadBalancerIngress
	for _, item := range items {
		var m networkingv1.IngressStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if ok {
			all = append(all, m.LoadBalancer.Ingress...)
		}
	}
	next := old
	next.LoadBalancer.Ingress = dedupSort(all, func(i networkingv1.IngressLoadBalancerIngress) (string, string) { return i.IP, i.Hostname })
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "loadBalancer")
}

// dedupSort drops exact duplicates and sorts by IP then hostname (stable,
// so entries differing only in ports keep their member order). Nil when empty.
func dedupSort[T any](in []T, key func(T) (string, string)) []T {
	var out []T
	for _, e := range in {
		dup := false
		for _, o := range out {
			if reflect.DeepEqual(e, o) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ai, ah := key(out[i])
		bi, bh := key(out[j])
		if ai != bi {
			return ai < bi
		}
		return ah < bh
	})
	return out
}

// aggregatePod takes the phase by precedence Failed > Pending > Running >
// Succeeded (a member without a status counts as Pending) and concatenates
// the members' container statuses, keeping ready and state only.
func aggregatePod(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old corev1.PodStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := corev1.PodStatus{}
	phases := map[corev1.PodPhase]bool{}
	for _, item := range items {
		var m corev1.PodStatus
		ok, err := memberStatus(item, &m)
		if err != nil {
			return nil, err
		}
		if !ok {
			phases[corev1.PodPending] = true
			continue
		}
		phases[m.Phase] = true
		for _, cs := range m.ContainerStatuses {
			next.ContainerStatuses = append(next.ContainerStatuses, corev1.ContainerStatus{Ready: cs.Ready, State: cs.State})
		}
		for _, cs := range m.InitContainerStatuses {
			next.InitContainerStatuses = append(next.InitContainerStatuses, corev1.ContainerStatus{Ready: cs.Ready, State: cs.State})
		}
	}
	for _, p := range []corev1.PodPhase{corev1.PodFailed, corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded} {
		if phases[p] {
			next.Phase = p
			break
		}
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatus(obj, &next)
}

// aggregatePersistentVolume takes the phase by precedence Failed > Pending >
// Available > Bound > Released.
func aggregatePersistentVolume(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old corev1.PersistentVolumeStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	phases := map[corev1.PersistentVolumePhase]bool{}
	for _, item := range items {
		var m corev1.PersistentVolumeStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if ok {
			phases[m.Phase] = true
		}
	}
	next := corev1.PersistentVolumeStatus{}
	for _, p := range []corev1.PersistentVolumePhase{corev1.VolumeFailed, corev1.VolumePending, corev1.VolumeAvailable, corev1.VolumeBound, corev1.VolumeReleased} {
		if phases[p] {
			next.Phase = p
			break
		}
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatus(obj, &next)
}

// aggregatePersistentVolumeClaim takes the phase by precedence Lost >
// Pending > Bound.
func aggregatePersistentVolumeClaim(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old corev1.PersistentVolumeClaimStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	phases := map[corev1.PersistentVolumeClaimPhase]bool{}
	for _, item := range items {
		var m corev1.PersistentVolumeClaimStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if ok {
			phases[m.Phase] = true
		}
	}
	next := corev1.PersistentVolumeClaimStatus{}
	for _, p := range []corev1.PersistentVolumeClaimPhase{corev1.ClaimLost, corev1.ClaimPending, corev1.ClaimBound} {
		if phases[p] {
			next.Phase = p
			break
		}
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatus(obj, &next)
}

// aggregatePDB sums the counters; disrupted pods are keyed
// "<cluster>/<pod>". Conditions and observedGeneration are kept.
func aggregatePDB(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old policyv1.PodDisruptionBudgetStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := old
	next.CurrentHealthy, next.DesiredHealthy, next.ExpectedPods, next.DisruptionsAllowed = 0, 0, 0, 0
	next.DisruptedPods = nil
	for _, item := range items {
		var m policyv1.PodDisruptionBudgetStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.CurrentHealthy += m.CurrentHealthy
		next.DesiredHealthy += m.DesiredHealthy
		next.ExpectedPods += m.ExpectedPods
		next.DisruptionsAllowed += m.DisruptionsAllowed
		for pod, t := range m.DisruptedPods {
			if next.DisruptedPods == nil {
				next.DisruptedPods = map[string]metav1.Time{}
			}
			next.DisruptedPods[item.ClusterName+"/"+pod] = t
		}
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "currentHealthy", "desiredHealthy", "expectedPods", "disruptionsAllowed", "disruptedPods")
}

// aggregateHPA sums current and desired replicas; other fields are kept.
func aggregateHPA(_ *Native, obj *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var old autoscalingv2.HorizontalPodAutoscalerStatus
	if _, err := statusOf(obj, &old); err != nil {
		return nil, err
	}
	next := old
	next.CurrentReplicas, next.DesiredReplicas = 0, 0
	for _, item := range items {
		var m autoscalingv2.HorizontalPodAutoscalerStatus
		if ok, err := memberStatus(item, &m); err != nil {
			return nil, err
		} else if !ok {
			continue
		}
		next.CurrentReplicas += m.CurrentReplicas
		next.DesiredReplicas += m.DesiredReplicas
	}
	if reflect.DeepEqual(old, next) {
		return obj, nil
	}
	return setStatusFields(obj, &next, "currentReplicas", "desiredReplicas")
}
