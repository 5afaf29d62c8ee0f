package member

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Compact holds an object as an informer of a Resource whose readers all
// take it compact keeps it: the metadata its keys, indexes and the
// readers' handlers read (namespace, name, uid, resourceVersion, the
// labels the readers' selectors read and the annotations they named), and
// the object itself as JSON, decoded only by the reader that needs it.
// The controllers' template informers keep templates so, with all of
// their metadata (CompactOf).
// Decoded, a Deployment weighs several times its JSON (a map per field),
// and the execution controller's informers hold one per object Flotilla
// applied: 15,000 in the propagation benchmark.
type Compact struct {
	metav1.ObjectMeta
	// raw is the object without its managedFields; it is never written to.
	raw []byte
}

var _ metav1.Object = &Compact{}

func (c *Compact) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (c *Compact) DeepCopyObject() runtime.Object {
	out := &Compact{raw: c.raw}
	c.DeepCopyInto(&out.ObjectMeta)
	return out
}

// Object decodes the object: a new one at every call, which its caller may
// change.
func (c *Compact) Object() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(c.raw); err != nil {
		return nil, err
	}
	return u, nil
}

// CompactOf makes a Compact of u keeping all of its metadata but
// managedFields (which it removes from u): for informers whose readers
// read any label, annotation or owner of the objects, such as the
// controllers' template informers. It fails only when u cannot be encoded
// (never for an object that came from JSON).
func CompactOf(u *unstructured.Unstructured) (*Compact, error) {
	raw, err := compactJSON(u)
	if err != nil {
		return nil, err
	}
	c := &Compact{raw: raw}
	c.Namespace, c.Name, c.GenerateName = u.GetNamespace(), u.GetName(), u.GetGenerateName()
	c.UID, c.ResourceVersion, c.Generation = u.GetUID(), u.GetResourceVersion(), u.GetGeneration()
	c.CreationTimestamp, c.DeletionTimestamp = u.GetCreationTimestamp(), u.GetDeletionTimestamp()
	c.DeletionGracePeriodSeconds = u.GetDeletionGracePeriodSeconds()
	c.Labels, c.Annotations = u.GetLabels(), u.GetAnnotations()
	c.OwnerReferences, c.Finalizers = u.GetOwnerReferences(), u.GetFinalizers()
	return c, nil
}

// compactJSON removes u's managedFields and returns its JSON.
func compactJSON(u *unstructured.Unstructured) ([]byte, error) {
	u.SetManagedFields(nil)
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	// The encoder's buffer has room to spare: keep the bytes only.
	return bytes.Clone(raw), nil
}

// CompactAll is an informer transform keeping each object as CompactOf
// does; what is not an *unstructured.Unstructured (a tombstone, an object
// already compact) it keeps as it is.
func CompactAll(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	return CompactOf(u)
}

// Unstructured returns what an informer of the hub holds as an object its
// caller may change: a Compact decoded, an *unstructured.Unstructured
// copied. False for anything else.
func Unstructured(obj any) (*unstructured.Unstructured, bool) {
	switch o := obj.(type) {
	case *Compact:
		u, err := o.Object()
		return u, err == nil
	case *unstructured.Unstructured:
		return o.DeepCopy(), true
	}
	return nil, false
}

// compactor makes Compact objects keeping the labels and annotations
// named (sorted).
type compactor struct {
	labels, annotations []string
}

// transform is the informer's transform: an object becomes a Compact.
// What it cannot encode (nothing that came from JSON) it keeps as it is,
// trimmed; Unstructured reads both.
func (c *compactor) transform(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	unmark(u)
	raw, err := compactJSON(u)
	if err != nil {
		return u, nil
	}
	out := &Compact{raw: raw, ObjectMeta: metav1.ObjectMeta{
		Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID(), ResourceVersion: u.GetResourceVersion(),
		Labels: pick(u.GetLabels(), c.labels), Annotations: pick(u.GetAnnotations(), c.annotations),
	}}
	return out, nil
}

// pick returns the entries of m with the keys named, nil for none.
func pick(m map[string]string, keys []string) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v, ok := m[k]; ok {
			if out == nil {
				out = make(map[string]string, len(keys))
			}
			out[k] = v
		}
	}
	return out
}
