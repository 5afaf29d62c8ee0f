package overrides

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestApplyField(t *testing.T) {
	t.Parallel()
	configMap := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cfg"},
			"data": map[string]any{
				"config.json": `{"db":{"host":"a","port":5432},"debug":false}`,
				"config.yaml": "# comment\ndb:\n  port: 5432\n  host: a\nlist:\n- x\n",
				"plain":       "not: [valid",
			},
			"spec": map[string]any{"count": int64(1)},
		}}
	}
	jsonOp := func(op policyv1alpha1.OverriderOperator, sub string, v any) policyv1alpha1.JSONPatchOperation {
		o := policyv1alpha1.JSONPatchOperation{SubPath: sub, Operator: op}
		if v != nil {
			o.Value = rawJSON(t, v)
		}
		return o
	}
	yamlOp := func(op policyv1alpha1.OverriderOperator, sub string, v any) policyv1alpha1.YAMLPatchOperation {
		o := policyv1alpha1.YAMLPatchOperation{SubPath: sub, Operator: op}
		if v != nil {
			o.Value = rawJSON(t, v)
		}
		return o
	}
	for _, tc := range []struct {
		name    string
		o       policyv1alpha1.FieldOverrider
		key     string
		want    string
		wantErr bool
	}{
		{
			name: "json replace, add and remove keep JSON",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{
				jsonOp(policyv1alpha1.OverriderOpReplace, "/db/host", "b"),
				jsonOp(policyv1alpha1.OverriderOpAdd, "/db/ssl", true),
				jsonOp(policyv1alpha1.OverriderOpRemove, "/debug", nil),
			}},
			key: "config.json", want: `{"db":{"host":"b","port":5432,"ssl":true}}`,
		},
		{
			name: "yaml replace, add and remove keep YAML",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.yaml", YAML: []policyv1alpha1.YAMLPatchOperation{
				yamlOp(policyv1alpha1.OverriderOpReplace, "/db/port", 6543),
				yamlOp(policyv1alpha1.OverriderOpAdd, "/list/-", "y"),
				yamlOp(policyv1alpha1.OverriderOpRemove, "/db/host", nil),
			}},
			key: "config.yaml", want: "db:\n  port: 6543\nlist:\n- x\n- \"y\"\n",
		},
		{
			name: "json sub-path missing",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.json", JSON: []policyv1alpha1.JSONPatchOperation{
				jsonOp(policyv1alpha1.OverriderOpRemove, "/nothing", nil)}},
			wantErr: true,
		},
		{
			name: "text is not YAML",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/data/plain", YAML: []policyv1alpha1.YAMLPatchOperation{
				yamlOp(policyv1alpha1.OverriderOpAdd, "/a", 1)}},
			wantErr: true,
		},
		{
			name: "text is not JSON",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/data/config.yaml", JSON: []policyv1alpha1.JSONPatchOperation{
				jsonOp(policyv1alpha1.OverriderOpAdd, "/a", 1)}},
			wantErr: true,
		},
		{
			name: "field path missing",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/data/other", JSON: []policyv1alpha1.JSONPatchOperation{
				jsonOp(policyv1alpha1.OverriderOpAdd, "/a", 1)}},
			wantErr: true,
		},
		{
			name: "field is not a string",
			o: policyv1alpha1.FieldOverrider{FieldPath: "/spec/count", JSON: []policyv1alpha1.JSONPatchOperation{
				jsonOp(policyv1alpha1.OverriderOpAdd, "/a", 1)}},
			wantErr: true,
		},
		{
			name: "no operations leave the field alone",
			o:    policyv1alpha1.FieldOverrider{FieldPath: "/data/config.yaml"},
			key:  "config.yaml", want: "# comment\ndb:\n  port: 5432\n  host: a\nlist:\n- x\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := configMap()
			err := applyField(obj, &tc.o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			got, _, _ := unstructured.NestedString(obj.Object, "data", tc.key)
			if got != tc.want {
				t.Errorf("data[%s] = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}
