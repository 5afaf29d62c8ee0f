package interpreter

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FederatedGeneration is carried next to a workload's reflected status so
// that aggregation can tell whether every member has caught up with the
// latest template.
type FederatedGeneration struct {
	// Generation is the member object's metadata.generation.
	Generation int64 `json:"generation,omitempty"`
	// ResourceTemplateGeneration is the template generation the member
	// object was built from (annotation resourcetemplate.karmada.io/generation).
	ResourceTemplateGeneration int64 `json:"resourceTemplateGeneration,omitempty"`
}

// WrappedDeploymentStatus is the reflected status of a Deployment.
type WrappedDeploymentStatus struct {
	FederatedGeneration     `json:",inline"`
	appsv1.DeploymentStatus `json:",inline"`
}

// WrappedReplicaSetStatus is the reflected status of a ReplicaSet.
type WrappedReplicaSetStatus struct {
	FederatedGeneration     `json:",inline"`
	appsv1.ReplicaSetStatus `json:",inline"`
}

// WrappedStatefulSetStatus is the reflected status of a StatefulSet.
type WrappedStatefulSetStatus struct {
	FederatedGeneration      `json:",inline"`
	appsv1.StatefulSetStatus `json:",inline"`
}

// WrappedDaemonSetStatus is the reflected status of a DaemonSet.
type WrappedDaemonSetStatus struct {
	FederatedGeneration    `json:",inline"`
	appsv1.DaemonSetStatus `json:",inline"`
}

// statusOf converts obj's .status into out; found is false when the status
// is absent or empty, in which case nothing is reported.
func statusOf(obj *unstructured.Unstructured, out interface{}) (bool, error) {
	m, found, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil {
		return false, fmt.Errorf("reading status: %w", err)
	}
	if !found || len(m) == 0 {
		return false, nil
	}
	return true, fromUnstructured(m, out)
}

func federatedGeneration(obj *unstructured.Unstructured) (FederatedGeneration, error) {
	g, err := resourceTemplateGeneration(obj)
	return FederatedGeneration{Generation: obj.GetGeneration(), ResourceTemplateGeneration: g}, err
}

func reflectWholeStatus(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	m, found, err := unstructured.NestedMap(obj.Object, "status")
	if err != nil {
		return nil, fmt.Errorf("reading status: %w", err)
	}
	if !found || len(m) == 0 {
		return nil, nil
	}
	return rawJSON(m)
}

func reflectDeployment(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s appsv1.DeploymentStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	fg, err := federatedGeneration(obj)
	if err != nil {
		return nil, err
	}
	return rawJSON(&WrappedDeploymentStatus{FederatedGeneration: fg, DeploymentStatus: appsv1.DeploymentStatus{
		Replicas:            s.Replicas,
		UpdatedReplicas:     s.UpdatedReplicas,
		ReadyReplicas:       s.ReadyReplicas,
		AvailableReplicas:   s.AvailableReplicas,
		UnavailableReplicas: s.UnavailableReplicas,
		ObservedGeneration:  s.ObservedGeneration,
	}})
}

func reflectReplicaSet(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s appsv1.ReplicaSetStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	fg, err := federatedGeneration(obj)
	if err != nil {
		return nil, err
	}
	return rawJSON(&WrappedReplicaSetStatus{FederatedGeneration: fg, ReplicaSetStatus: appsv1.ReplicaSetStatus{
		Replicas:           s.Replicas,
		ReadyReplicas:      s.ReadyReplicas,
		AvailableReplicas:  s.AvailableReplicas,
		ObservedGeneration: s.ObservedGeneration,
	}})
}

// reflectStatefulSet also carries observedGeneration: the aggregation rule
// for observedGeneration needs it from every member.
func reflectStatefulSet(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s appsv1.StatefulSetStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	fg, err := federatedGeneration(obj)
	if err != nil {
		return nil, err
	}
	return rawJSON(&WrappedStatefulSetStatus{FederatedGeneration: fg, StatefulSetStatus: appsv1.StatefulSetStatus{
		AvailableReplicas:  s.AvailableReplicas,
		CurrentReplicas:    s.CurrentReplicas,
		ReadyReplicas:      s.ReadyReplicas,
		Replicas:           s.Replicas,
		UpdatedReplicas:    s.UpdatedReplicas,
		ObservedGeneration: s.ObservedGeneration,
	}})
}

func reflectDaemonSet(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s appsv1.DaemonSetStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	fg, err := federatedGeneration(obj)
	if err != nil {
		return nil, err
	}
	return rawJSON(&WrappedDaemonSetStatus{FederatedGeneration: fg, DaemonSetStatus: appsv1.DaemonSetStatus{
		CurrentNumberScheduled: s.CurrentNumberScheduled,
		DesiredNumberScheduled: s.DesiredNumberScheduled,
		NumberAvailable:        s.NumberAvailable,
		NumberMisscheduled:     s.NumberMisscheduled,
		NumberReady:            s.NumberReady,
		UpdatedNumberScheduled: s.UpdatedNumberScheduled,
		NumberUnavailable:      s.NumberUnavailable,
		ObservedGeneration:     s.ObservedGeneration,
	}})
}

// reflectService reports the load balancer status of LoadBalancer services only.
func reflectService(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	t, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	if t != string(corev1.ServiceTypeLoadBalancer) {
		return nil, nil
	}
	var s corev1.ServiceStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	return rawJSON(&corev1.ServiceStatus{LoadBalancer: s.LoadBalancer})
}

func reflectJob(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s batchv1.JobStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	return rawJSON(&batchv1.JobStatus{
		Active:         s.Active,
		Succeeded:      s.Succeeded,
		Failed:         s.Failed,
		Conditions:     s.Conditions,
		StartTime:      s.StartTime,
		CompletionTime: s.CompletionTime,
	})
}

func reflectPDB(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s policyv1.PodDisruptionBudgetStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	return rawJSON(&policyv1.PodDisruptionBudgetStatus{
		DisruptionsAllowed: s.DisruptionsAllowed,
		ExpectedPods:       s.ExpectedPods,
		DesiredHealthy:     s.DesiredHealthy,
		CurrentHealthy:     s.CurrentHealthy,
		DisruptedPods:      s.DisruptedPods,
	})
}

func reflectHPA(obj *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var s autoscalingv2.HorizontalPodAutoscalerStatus
	if found, err := statusOf(obj, &s); !found || err != nil {
		return nil, err
	}
	// A struct of its own: the typed status would also encode currentMetrics: null.
	return rawJSON(&struct {
		CurrentReplicas int32 `json:"currentReplicas,omitempty"`
		DesiredReplicas int32 `json:"desiredReplicas"`
	}{s.CurrentReplicas, s.DesiredReplicas})
}
