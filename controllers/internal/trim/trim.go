// Package trim holds the controllers' informer transforms: what an
// informer keeps of each object it receives.
package trim

import "k8s.io/apimachinery/pkg/api/meta"

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
