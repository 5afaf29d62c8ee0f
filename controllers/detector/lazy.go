package detector

import (
	"maps"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// A policy with activationPreference Lazy takes effect on a template only when
// the template itself next changes, as Karmada's detector does it:
//   - a template that existed before the policy (or before this detector
//     started) is claimed at once, but gets no binding until it changes;
//   - a template created after the policy is a change: it gets its binding
//     at once;
//   - a change of the policy, or a preemption by it, rewrites the claim at
//     once, and the binding keeps its placement and spec until the template
//     changes.
// A change is the user's: one made by Karmada's components (Flotilla's)
// alone, such as the claim itself, is none (changedByKarmada).

// karmadaKeyPart marks the labels and annotations Karmada's components (and
// Flotilla's) write on templates.
const karmadaKeyPart = ".karmada.io"

// lazyWaits tells whether the binding of a template waits for the
// template's next change: chosen is Lazy and the template did not change
// since it was last reconciled.
func lazyWaits(chosen *policy, templateChanged bool) bool {
	return chosen.Spec.ActivationPreference == policyv1alpha1.LazyActivation && !templateChanged
}

// changedByKarmada tells whether the update from old to obj is Karmada's
// own: the two are the same once status, the fields the API server sets
// (managedFields, resourceVersion, generation) and the labels and
// annotations of Karmada's components are left out. The label users set to
// keep a namespace from propagating is the user's, despite its prefix.
func changedByKarmada(old, obj *unstructured.Unstructured) bool {
	if !reflect.DeepEqual(userPart(old.Object), userPart(obj.Object)) {
		return false
	}
	om, _ := old.Object["metadata"].(map[string]any)
	nm, _ := obj.Object["metadata"].(map[string]any)
	if !reflect.DeepEqual(userMetadata(om), userMetadata(nm)) {
		return false
	}
	return maps.Equal(userKeys(old.GetLabels()), userKeys(obj.GetLabels())) &&
		maps.Equal(userKeys(old.GetAnnotations()), userKeys(obj.GetAnnotations()))
}

// userPart is a shallow copy of obj without status and metadata.
func userPart(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" && k != "metadata" {
			out[k] = v
		}
	}
	return out
}

// userMetadata is a shallow copy of md without what the API server sets
// and without labels and annotations (compared by userKeys).
func userMetadata(md map[string]any) map[string]any {
	out := make(map[string]any, len(md))
	for k, v := range md {
		switch k {
		case "managedFields", "resourceVersion", "generation", "labels", "annotations":
		default:
			out[k] = v
		}
	}
	return out
}

// userKeys is m without Karmada's keys; nil when nothing is left.
func userKeys(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if strings.Contains(k, karmadaKeyPart) && k != policyv1alpha1.NamespaceSkipAutoPropagationLabel {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
