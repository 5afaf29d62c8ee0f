package interpreter

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
)

var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestNative() *Native {
	return NewNative(WithClock(func() time.Time { return fixedNow }))
}

// obj parses a YAML manifest.
func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return u
}

// item builds an aggregated status item from a YAML status.
func item(t *testing.T, cluster, statusYAML string) workv1alpha2.AggregatedStatusItem {
	t.Helper()
	it := workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true}
	if statusYAML == "" {
		return it
	}
	j, err := yaml.YAMLToJSON([]byte(statusYAML))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	it.Status = &runtime.RawExtension{Raw: j}
	return it
}

// asMap decodes JSON into a generic map for comparisons.
func asMap(t *testing.T, raw []byte) map[string]interface{} {
	t.Helper()
	var m map[string]interface{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("json: %v", err)
	}
	return m
}

// yamlMap parses YAML into a generic map (numbers as float64, like asMap).
func yamlMap(t *testing.T, y string) map[string]interface{} {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return asMap(t, j)
}

// statusMap returns obj's status as a generic JSON map.
func statusMap(t *testing.T, u *unstructured.Unstructured) map[string]interface{} {
	t.Helper()
	s, _, _ := unstructured.NestedMap(u.Object, "status")
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	return asMap(t, j)
}

func nestedInt64(u *unstructured.Unstructured, path ...string) (int64, bool, error) {
	return unstructured.NestedInt64(u.Object, path...)
}
