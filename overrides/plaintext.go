package overrides

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// operation is one RFC 6902 JSON patch operation.
type operation struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

// newOperation builds a patch operation from an overrider's fields. An add or
// replace without a value adds or replaces with null, as Karmada does
// (apiextensionsv1.JSON encodes an empty value as null); remove carries no value.
func newOperation(op policyv1alpha1.OverriderOperator, path string, value apiextensionsv1.JSON) operation {
	o := operation{Op: string(op), Path: path}
	switch {
	case op == policyv1alpha1.OverriderOpRemove:
	case len(value.Raw) > 0:
		o.Value = value.Raw
	default:
		o.Value = json.RawMessage("null")
	}
	return o
}

// patchDocument applies ops to the JSON document doc with the default options
// of json-patch v5, those Karmada uses: an add whose parent does not exist, a
// replace of a missing member and a remove of a missing member all fail.
func patchDocument(doc []byte, ops []operation) ([]byte, error) {
	raw, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("encoding json patch: %w", err)
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding json patch: %w", err)
	}
	out, err := patch.Apply(doc)
	if err != nil {
		return nil, fmt.Errorf("applying json patch: %w", err)
	}
	return out, nil
}

// applyPlaintext applies the plaintext overriders to obj as one JSON patch.
func applyPlaintext(obj *unstructured.Unstructured, ps []policyv1alpha1.PlaintextOverrider) error {
	ops := make([]operation, 0, len(ps))
	for _, p := range ps {
		ops = append(ops, newOperation(p.Operator, p.Path, p.Value))
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("encoding object: %w", err)
	}
	out, err := patchDocument(doc, ops)
	if err != nil {
		return err
	}
	// utiljson decodes numbers as int64 or float64, the types unstructured
	// content must hold.
	var content map[string]any
	if err := utiljson.Unmarshal(out, &content); err != nil {
		return fmt.Errorf("decoding patched object: %w", err)
	}
	if content == nil {
		return errors.New("patched object is not a JSON object")
	}
	obj.Object = content
	return nil
}
