package overrides

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

// applyField patches the JSON or YAML text held in the string at
// o.FieldPath and writes it back in the same format. YAML wins when both are
// set, as in Karmada (validation allows only one); with neither the field is
// left alone.
func applyField(obj *unstructured.Unstructured, o *policyv1alpha1.FieldOverrider) error {
	if len(o.YAML) == 0 && len(o.JSON) == 0 {
		return nil
	}
	at, text, err := stringAt(obj.Object, o.FieldPath)
	if err != nil {
		return fmt.Errorf("reading fieldPath: %w", err)
	}
	var out []byte
	if len(o.YAML) > 0 {
		ops := make([]operation, 0, len(o.YAML))
		for _, op := range o.YAML {
			ops = append(ops, newOperation(op.Operator, op.SubPath, op.Value))
		}
		out, err = patchYAML([]byte(text), ops)
	} else {
		ops := make([]operation, 0, len(o.JSON))
		for _, op := range o.JSON {
			ops = append(ops, newOperation(op.Operator, op.SubPath, op.Value))
		}
		out, err = patchDocument([]byte(text), ops)
	}
	if err != nil {
		return fmt.Errorf("field %s: %w", o.FieldPath, err)
	}
	at.set(string(out))
	return nil
}

// patchYAML applies ops to YAML text through its JSON form. The result is
// re-serialized by sigs.k8s.io/yaml, so keys come out sorted and comments
// are lost, exactly as with Karmada.
func patchYAML(text []byte, ops []operation) ([]byte, error) {
	doc, err := yaml.YAMLToJSON(text)
	if err != nil {
		return nil, fmt.Errorf("converting yaml to json: %w", err)
	}
	doc, err = patchDocument(doc, ops)
	if err != nil {
		return nil, err
	}
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return nil, fmt.Errorf("converting json to yaml: %w", err)
	}
	return out, nil
}
