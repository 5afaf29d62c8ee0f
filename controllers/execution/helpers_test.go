package execution

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// obj reads a YAML object.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatalf("bad YAML: %v\n%s", err, y)
	}
	return u
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
