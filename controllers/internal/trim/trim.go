// Package trim holds the controllers' informer transforms: what an
// informer keeps of each object it receives.
package trim

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// ManagedFields drops metadata.managedFields, which no controller reads:
// in a Deployment updated by two managers they weigh as much as its spec,
// and every informer of the process would keep them for every object.
// Writes are patches, or updates that leave managedFields unset, which the
// API server reads as "keep them".
func ManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// ManagedFieldsOfShared is ManagedFields for informers fed objects that
// others hold too (flotilla-apiserver's storage in process): an object
// with managedFields is replaced by a shallow copy without them, so the
// shared object is not changed; one without is kept as it is.
func ManagedFieldsOfShared(obj any) (any, error) {
	m, err := meta.Accessor(obj)
	if err != nil || len(m.GetManagedFields()) == 0 {
		return obj, nil
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return obj, nil
	}
	if _, unstructured := obj.(runtime.Unstructured); unstructured {
		// Its metadata is a map the copy would share.
		cp := obj.(runtime.Object).DeepCopyObject()
		return ManagedFields(cp)
	}
	cp := reflect.New(v.Elem().Type())
	cp.Elem().Set(v.Elem())
	return ManagedFields(cp.Interface())
}
