package execution

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

// retainMemberFields copies into desired what belongs to the member object
// rather than to the Work (docs/compatibility.md, Applying to a member): the
// resourceVersion the update is made against, finalizers and owner references
// set by the member's controllers, and the labels and annotations Flotilla does
// not manage. A key is managed when the manifest carries it, or when the
// observed object's managed-labels / managed-annotations list names it (it was
// applied before and has since been removed from the template, so it is removed
// from the member too).
func retainMemberFields(desired, observed *unstructured.Unstructured) {
	desired.SetResourceVersion(observed.GetResourceVersion())
	desired.SetFinalizers(observed.GetFinalizers())
	desired.SetOwnerReferences(observed.GetOwnerReferences())
	observedAnnotations := observed.GetAnnotations()
	desired.SetAnnotations(retainKeys(desired.GetAnnotations(), observedAnnotations, observedAnnotations[workv1alpha2.ManagedAnnotation]))
	desired.SetLabels(retainKeys(desired.GetLabels(), observed.GetLabels(), observedAnnotations[workv1alpha2.ManagedLabels]))
}

// retainKeys returns desired plus the keys of observed that desired lacks
// and the comma-separated list managed does not name; nil when empty.
func retainKeys(desired, observed map[string]string, managed string) map[string]string {
	out := make(map[string]string, len(desired)+len(observed))
	previouslyManaged := map[string]bool{}
	for _, k := range strings.Split(managed, ",") {
		if k = strings.TrimSpace(k); k != "" {
			previouslyManaged[k] = true
		}
	}
	for k, v := range observed {
		if !previouslyManaged[k] {
			out[k] = v
		}
	}
	for k, v := range desired {
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// adopting tells whether writing over observed takes over an object
// Flotilla did not create, which then keeps AdoptedAnnotation (retained
// by retainMemberFields like any key the manifest lacks).
func adopting(observed *unstructured.Unstructured) bool {
	return observed.GetLabels()[workv1alpha1.ManagedByKarmadaLabel] != workv1alpha1.ManagedByKarmadaLabelValue
}

// markAdopted sets AdoptedAnnotation on want.
func markAdopted(want *unstructured.Unstructured) {
	a := want.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[workv1alpha2.AdoptedAnnotation] = "true"
	want.SetAnnotations(a)
}

// checkConflict tells whether desired may be written over the existing
// member object observed. An object Flotilla (or Karmada) applied carries
// karmada.io/managed=true; any other object is only taken over when the
// manifest asks for it with work.karmada.io/conflict-resolution: overwrite.
// The error is Karmada's, word for word.
func checkConflict(desired, observed *unstructured.Unstructured, cluster string) error {
	if observed.GetLabels()[workv1alpha1.ManagedByKarmadaLabel] == workv1alpha1.ManagedByKarmadaLabelValue {
		return nil
	}
	if desired.GetAnnotations()[workv1alpha2.ResourceConflictResolutionAnnotation] == workv1alpha2.ResourceConflictResolutionOverwrite {
		return nil
	}
	return fmt.Errorf("resource(kind=%s, %s/%s) already exists in the cluster %v and the %s strategy value is empty, Karmada will not manage this resource",
		desired.GetKind(), desired.GetNamespace(), desired.GetName(), cluster, workv1alpha2.ResourceConflictResolutionAnnotation)
}

// holdsButOwnMetadata tells whether observed, an object Flotilla did not
// create, already holds want except for the metadata Flotilla adds to what it
// applies (karmadaLabels, karmadaAnnotations and the conflict resolution the
// manifest carries). Such an object is taken over without a write: it keeps its
// resourceVersion, and nothing in the member sees a change (as Karmada writes
// nothing when the pruned objects are equal; a promoted object keeps running
// untouched). A later change of the manifest writes it, with the metadata then.
func holdsButOwnMetadata(want, observed *unstructured.Unstructured) bool {
	return isApplied(withoutOwnMetadata(want), observed)
}

// withoutOwnMetadata is want without the metadata Flotilla adds to what it
// applies.
func withoutOwnMetadata(want *unstructured.Unstructured) *unstructured.Unstructured {
	stripped := want.DeepCopy()
	stripped.SetLabels(withoutKeys(stripped.GetLabels(), karmadaLabels))
	stripped.SetAnnotations(withoutKeys(stripped.GetAnnotations(), takeOverAnnotations))
	return stripped
}

// takeOverAnnotations are the annotations Flotilla adds to what it applies
// and the manifest's conflict resolution.
var takeOverAnnotations = append(slices.Clip(karmadaAnnotations), workv1alpha2.ResourceConflictResolutionAnnotation)

// withoutKeys returns m without keys; nil when nothing is left.
func withoutKeys(m map[string]string, keys []string) map[string]string {
	out := maps.Clone(m)
	for _, k := range keys {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
