package interpreter

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// specReplicas defaults a nil replicas pointer to 1, as the API server does.
func specReplicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func deploymentHealthy(obj *unstructured.Unstructured) (bool, error) {
	var d appsv1.Deployment
	if err := fromUnstructured(obj.Object, &d); err != nil {
		return false, err
	}
	s := d.Status
	return s.ObservedGeneration == d.Generation &&
		s.UpdatedReplicas >= specReplicas(d.Spec.Replicas) &&
		s.AvailableReplicas >= s.UpdatedReplicas, nil
}

func statefulSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	var d appsv1.StatefulSet
	if err := fromUnstructured(obj.Object, &d); err != nil {
		return false, err
	}
	s := d.Status
	return s.ObservedGeneration == d.Generation &&
		s.UpdatedReplicas >= specReplicas(d.Spec.Replicas) &&
		s.AvailableReplicas >= s.UpdatedReplicas, nil
}

func replicaSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	var d appsv1.ReplicaSet
	if err := fromUnstructured(obj.Object, &d); err != nil {
		return false, err
	}
	return d.Status.ObservedGeneration == d.Generation &&
		d.Status.AvailableReplicas >= specReplicas(d.Spec.Replicas), nil
}

func daemonSetHealthy(obj *unstructured.Unstructured) (bool, error) {
	var d appsv1.DaemonSet
	if err := fromUnstructured(obj.Object, &d); err != nil {
		return false, err
	}
	s := d.Status
	return s.ObservedGeneration == d.Generation &&
		s.UpdatedNumberScheduled >= s.DesiredNumberScheduled &&
		s.NumberAvailable >= s.UpdatedNumberScheduled, nil
}

// serviceHealthy: a LoadBalancer service needs an ingress with an IP or a
// hostname; other services are healthy.
func serviceHealthy(obj *unstructured.Unstructured) (bool, error) {
	var svc corev1.Service
	if err := fromUnstructured(obj.Object, &svc); err != nil {
		return false, err
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return true, nil
	}
	for _, i := range svc.Status.LoadBalancer.Ingress {
		if i.IP != "" || i.Hostname != "" {
			return true, nil
		}
	}
	return false, nil
}

func ingressHealthy(obj *unstructured.Unstructured) (bool, error) {
	var ing networkingv1.Ingress
	if err := fromUnstructured(obj.Object, &ing); err != nil {
		return false, err
	}
	for _, i := range ing.Status.LoadBalancer.Ingress {
		if i.IP != "" || i.Hostname != "" {
			return true, nil
		}
	}
	return false, nil
}

func pvcHealthy(obj *unstructured.Unstructured) (bool, error) {
	phase, _, err := unstructured.NestedString(obj.Object, "status", "phase")
	return phase == string(corev1.ClaimBound), err
}

// podHealthy: Succeeded, or Running with condition Ready=True.
func podHealthy(obj *unstructured.Unstructured) (bool, error) {
	var pod corev1.Pod
	if err := fromUnstructured(obj.Object, &pod); err != nil {
		return false, err
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return true, nil
	case corev1.PodRunning:
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
	}
	return false, nil
}

func pdbHealthy(obj *unstructured.Unstructured) (bool, error) {
	var pdb policyv1.PodDisruptionBudget
	if err := fromUnstructured(obj.Object, &pdb); err != nil {
		return false, err
	}
	return pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy, nil
}
