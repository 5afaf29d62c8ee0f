package execution

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cachedMeta returns the metadata of what a member informer holds: a
// member.Compact (the informers of the kinds only this controller reads)
// or an *unstructured.Unstructured (those it shares with another reader).
func cachedMeta(obj any) (metav1.Object, bool) {
	m, err := meta.Accessor(obj)
	return m, err == nil
}
