// Package objectmeta compares the metadata a controller writes by merge
// patch with what is stored: the Work writers (binding, namespace,
// unified-auth and multi-cluster-service controllers) and the collected
// EndpointSlices share it.
package objectmeta

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Covers tells whether stored carries every label and annotation of desired
// with the same value, so that merging desired's into stored changes
// nothing. Labels and annotations stored has beyond desired's do not count.
func Covers(stored, desired metav1.Object) bool {
	return sub(stored.GetLabels(), desired.GetLabels()) && sub(stored.GetAnnotations(), desired.GetAnnotations())
}

// sub tells whether every key of want is in have with the same value.
func sub(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
