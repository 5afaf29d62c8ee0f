package v1alpha2

import corev1 "k8s.io/api/core/v1"

// EventTarget is the reference an event about the template is recorded
// on (the events Karmada records on a binding and on its template alike).
func (r *ObjectReference) EventTarget() *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UID: r.UID}
}
