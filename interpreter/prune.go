package interpreter

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/apis/work/mutation"
)

// PruneIrrelevantFields returns a copy of obj without what must not be applied
// to a member (Karmada's Prune operation): the same pruning the Work registry
// applies to every manifest, so the two can never disagree.
func PruneIrrelevantFields(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	if err := mutation.PruneManifest(out); err != nil {
		// A field of the wrong type: leave the copy as pruned as it got.
		return out
	}
	return out
}
