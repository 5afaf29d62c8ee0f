package workloadrebalancer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
)

func ref(kind, ns, name string) appsv1alpha1.ObjectReference {
	return appsv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name}
}

func observed(w appsv1alpha1.ObjectReference, result appsv1alpha1.RebalanceResult) appsv1alpha1.ObservedWorkload {
	o := appsv1alpha1.ObservedWorkload{Workload: w, Result: result}
	if result == appsv1alpha1.RebalanceFailed {
		o.Reason = appsv1alpha1.RebalanceObjectNotFound
	}
	return o
}

func TestObserve(t *testing.T) {
	a, b, c := ref("Deployment", "ns", "a"), ref("Deployment", "ns", "b"), ref("StatefulSet", "", "c")
	ok, failed := appsv1alpha1.RebalanceSuccessful, appsv1alpha1.RebalanceFailed
	for _, tc := range []struct {
		name   string
		spec   []appsv1alpha1.ObjectReference
		status []appsv1alpha1.ObservedWorkload
		want   []appsv1alpha1.ObservedWorkload
	}{
		{"new rebalancer: every workload pending, sorted", []appsv1alpha1.ObjectReference{c, b, a}, nil,
			[]appsv1alpha1.ObservedWorkload{observed(a, ""), observed(b, ""), observed(c, "")}},
		{"results kept", []appsv1alpha1.ObjectReference{a, b}, []appsv1alpha1.ObservedWorkload{observed(a, ok), observed(b, failed)},
			[]appsv1alpha1.ObservedWorkload{observed(a, ok), observed(b, failed)}},
		{"removed: kept only if it succeeded", []appsv1alpha1.ObjectReference{c}, []appsv1alpha1.ObservedWorkload{observed(a, ok), observed(b, failed)},
			[]appsv1alpha1.ObservedWorkload{observed(a, ok), observed(c, "")}},
		{"named twice: observed once", []appsv1alpha1.ObjectReference{a, a}, nil, []appsv1alpha1.ObservedWorkload{observed(a, "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &appsv1alpha1.WorkloadRebalancer{Spec: appsv1alpha1.WorkloadRebalancerSpec{Workloads: tc.spec},
				Status: appsv1alpha1.WorkloadRebalancerStatus{ObservedWorkloads: tc.status}}
			if diff := cmp.Diff(tc.want, Observe(r)); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
		})
	}
}
