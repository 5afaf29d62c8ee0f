package overrides

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// applyMetadataMap changes metadata.<field> ("labels" or "annotations") with
// Karmada's semantics, those of JSON patch operations per key: add sets the
// key whether or not it exists (creating the map if needed), replace and
// remove only touch keys that exist and silently skip the others.
func applyMetadataMap(obj *unstructured.Unstructured, field string, o *policyv1alpha1.LabelAnnotationOverrider) error {
	m, err := metadataMap(obj, field, o.Operator == policyv1alpha1.OverriderOpAdd)
	if err != nil || m == nil {
		return err
	}
	for k, v := range o.Value {
		_, exists := m[k]
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			m[k] = v
		case policyv1alpha1.OverriderOpReplace:
			if exists {
				m[k] = v
			}
		case policyv1alpha1.OverriderOpRemove:
			delete(m, k)
		default:
			return fmt.Errorf("unsupported operator %q", o.Operator)
		}
	}
	return nil
}

// metadataMap returns metadata.<field> of obj, in place. When it is absent it
// returns nil, or a new empty map set on obj when create is true.
func metadataMap(obj *unstructured.Unstructured, field string, create bool) (map[string]any, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", field)
	if err != nil {
		return nil, fmt.Errorf("reading metadata.%s: %w", field, err)
	}
	if found && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("metadata.%s is not an object", field)
		}
		return m, nil
	}
	if !create {
		return nil, nil
	}
	m := map[string]any{}
	meta, found, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata")
	if err != nil {
		return nil, fmt.Errorf("reading metadata: %w", err)
	}
	if !found || meta == nil {
		obj.Object["metadata"] = map[string]any{field: m}
		return m, nil
	}
	mm, ok := meta.(map[string]any)
	if !ok {
		return nil, errors.New("metadata is not an object")
	}
	mm[field] = m
	return m, nil
}
