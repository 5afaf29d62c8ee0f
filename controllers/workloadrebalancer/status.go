package workloadrebalancer

import (
	"cmp"
	"slices"

	appsv1alpha1 "github.com/flotilla-io/flotilla/apis/apps/v1alpha1"
)

// Observe returns the observed workloads of r for its current spec: the
// entries of workloads still named keep their result; entries of workloads
// no longer named stay only if they succeeded; newly named workloads get
// an entry without a result. Sorted by apiVersion, kind, namespace, name.
func Observe(r *appsv1alpha1.WorkloadRebalancer) []appsv1alpha1.ObservedWorkload {
	named := make(map[appsv1alpha1.ObjectReference]bool, len(r.Spec.Workloads))
	for _, w := range r.Spec.Workloads {
		named[w] = true
	}
	out := make([]appsv1alpha1.ObservedWorkload, 0, len(r.Spec.Workloads))
	for _, o := range r.Status.ObservedWorkloads {
		switch {
		case named[o.Workload]:
			out = append(out, o)
			delete(named, o.Workload)
		case o.Result == appsv1alpha1.RebalanceSuccessful:
			out = append(out, o)
		}
	}
	for _, w := range r.Spec.Workloads {
		if named[w] {
			out = append(out, appsv1alpha1.ObservedWorkload{Workload: w})
			delete(named, w) // a workload named twice is observed once
		}
	}
	slices.SortFunc(out, func(a, b appsv1alpha1.ObservedWorkload) int {
		x, y := a.Workload, b.Workload
		return cmp.Or(cmp.Compare(x.APIVersion, y.APIVersion), cmp.Compare(x.Kind, y.Kind),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
	return out
}

// pending reports whether a workload still waits for its result.
func pending(o appsv1alpha1.ObservedWorkload) bool { return o.Result == "" }
