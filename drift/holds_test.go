package drift

import (
	"testing"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
)

func TestHolds(t *testing.T) {
	member := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "web", "app": "x"}},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx:1.27", "resources": map[string]any{"limits": map[string]any{"cpu": "500m"}}},
			}}},
			"ports": []any{int64(80), int64(443)},
		},
	}
	for _, tc := range []struct {
		name         string
		path, value  string
		holds, known bool
	}{
		{"a scalar back as applied", "spec.replicas", "3", true, true},
		{"a scalar still edited", "spec.replicas", "2", false, true},
		{"a label key with dots", "metadata.labels.app.kubernetes.io/name", `"web"`, true, true},
		{"a label key with dots, edited", "metadata.labels.app.kubernetes.io/name", `"api"`, false, true},
		{"a named item's field", "spec.template.spec.containers[name=web].image", `"nginx:1.27"`, true, true},
		{"a named item the member lacks", "spec.template.spec.containers[name=sidecar].image", `"envoy"`, false, true},
		{"a quantity by amount", "spec.template.spec.containers[name=web].resources.limits.cpu", `"0.5"`, true, true},
		{"an indexed item", "spec.ports[1]", "443", true, true},
		{"an index out of range", "spec.ports[5]", "443", false, true},
		{"a field the member lacks", "spec.paused", "true", false, true},
		{"an empty value matches an absent field", "spec.paused", "false", true, true},
		{"a masked value", "data.password", Masked, false, false},
		{"a cut value", "spec.replicas", `"aaaa…`, false, false},
		{"a cut path", "spec.templ…", "3", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			holds, known := Holds(member, workv1alpha1.DriftedField{Path: tc.path, ValueApplied: tc.value})
			if holds != tc.holds || known != tc.known {
				t.Errorf("Holds(%s = %s) = %v, %v; want %v, %v", tc.path, tc.value, holds, known, tc.holds, tc.known)
			}
		})
	}
}

// TestHoldsWhatCompareRecords: every field Compare reports for a member
// that was edited is not held by it, and is held by what was applied.
func TestHoldsWhatCompareRecords(t *testing.T) {
	applied := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "web"}},
		"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "web", "image": "nginx:1.27"}}}}}}
	edited := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "api"}},
		"spec": map[string]any{"replicas": int64(5), "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "web", "image": "nginx:1.28"}}}}}}
	r := Compare(applied, edited, Options{})
	if len(r.Fields) != 3 {
		t.Fatalf("Compare found %v; want 3 fields", r.Fields)
	}
	for _, f := range r.Fields {
		if holds, known := Holds(edited, f); holds || !known {
			t.Errorf("the edited member: Holds(%s) = %v, %v; want false, true", f.Path, holds, known)
		}
		if holds, known := Holds(applied, f); !holds || !known {
			t.Errorf("what was applied: Holds(%s) = %v, %v; want true, true", f.Path, holds, known)
		}
	}
}
