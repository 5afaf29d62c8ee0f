package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestApplyPlaintext(t *testing.T) {
	t.Parallel()
	pt := func(op policyv1alpha1.OverriderOperator, path string, v any) policyv1alpha1.PlaintextOverrider {
		p := policyv1alpha1.PlaintextOverrider{Path: path, Operator: op}
		if v != nil {
			p.Value = rawJSON(t, v)
		}
		return p
	}
	base := func() map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "s", "labels": map[string]any{"app": "x"}},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(80)}}, "type": "ClusterIP"},
		}
	}
	with := func(mod func(m map[string]any)) map[string]any {
		m := base()
		mod(m)
		return m
	}
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }
	for _, tc := range []struct {
		name    string
		ops     []policyv1alpha1.PlaintextOverrider
		want    map[string]any
		wantErr bool
	}{
		{
			name: "replace",
			ops:  []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpReplace, "/spec/type", "NodePort")},
			want: with(func(m map[string]any) { spec(m)["type"] = "NodePort" }),
		},
		{
			name: "add a member and append to a list",
			ops: []policyv1alpha1.PlaintextOverrider{
				pt(policyv1alpha1.OverriderOpAdd, "/spec/clusterIP", "None"),
				pt(policyv1alpha1.OverriderOpAdd, "/spec/ports/-", map[string]any{"port": 443}),
			},
			want: with(func(m map[string]any) {
				spec(m)["clusterIP"] = "None"
				spec(m)["ports"] = []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(443)}}
			}),
		},
		{
			name: "add replaces an existing member",
			ops:  []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpAdd, "/metadata/labels", map[string]string{"b": "c"})},
			want: with(func(m map[string]any) { m["metadata"].(map[string]any)["labels"] = map[string]any{"b": "c"} }),
		},
		{
			name: "escaped key",
			ops:  []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpAdd, "/metadata/labels/app.kubernetes.io~1name", "x")},
			want: with(func(m map[string]any) {
				m["metadata"].(map[string]any)["labels"].(map[string]any)["app.kubernetes.io/name"] = "x"
			}),
		},
		{
			name: "add without value adds null",
			ops:  []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpAdd, "/spec/selector", nil)},
			want: with(func(m map[string]any) { spec(m)["selector"] = nil }),
		},
		{
			name: "remove",
			ops:  []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpRemove, "/metadata/labels/app", nil)},
			want: with(func(m map[string]any) { m["metadata"].(map[string]any)["labels"] = map[string]any{} }),
		},
		{
			// Karmada applies with json-patch's default options: no parent is created.
			name:    "add under a missing parent fails",
			ops:     []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpAdd, "/spec/template/metadata", map[string]any{})},
			wantErr: true,
		},
		{
			name:    "replace of a missing member fails",
			ops:     []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpReplace, "/spec/externalName", "x")},
			wantErr: true,
		},
		{
			name:    "remove of a missing member fails",
			ops:     []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpRemove, "/spec/externalName", nil)},
			wantErr: true,
		},
		{
			name: "operations fail together",
			ops: []policyv1alpha1.PlaintextOverrider{
				pt(policyv1alpha1.OverriderOpReplace, "/spec/type", "NodePort"),
				pt(policyv1alpha1.OverriderOpRemove, "/spec/externalName", nil),
			},
			wantErr: true,
		},
		{
			name:    "unknown operator",
			ops:     []policyv1alpha1.PlaintextOverrider{pt("move", "/spec/type", nil)},
			wantErr: true,
		},
		{
			name:    "whole object replaced by a non-object",
			ops:     []policyv1alpha1.PlaintextOverrider{pt(policyv1alpha1.OverriderOpReplace, "", []string{"x"})},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := &unstructured.Unstructured{Object: base()}
			err := applyPlaintext(obj, tc.ops)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				if diff := cmp.Diff(base(), obj.Object); diff != "" {
					t.Errorf("object changed on error (-want +got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tc.want, obj.Object); diff != "" {
				t.Errorf("object (-want +got):\n%s", diff)
			}
			// The content must stay valid unstructured content (int64, not
			// float64 or json.Number), or DeepCopy would panic.
			_ = obj.DeepCopy()
		})
	}
}

func TestNewOperation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		op    policyv1alpha1.OverriderOperator
		value apiextensionsv1.JSON
		want  string
	}{
		{policyv1alpha1.OverriderOpAdd, apiextensionsv1.JSON{Raw: []byte(`{"a":1}`)}, `{"a":1}`},
		{policyv1alpha1.OverriderOpReplace, apiextensionsv1.JSON{}, `null`},
		{policyv1alpha1.OverriderOpRemove, apiextensionsv1.JSON{Raw: []byte(`1`)}, ``},
	} {
		if got := string(newOperation(tc.op, "/x", tc.value).Value); got != tc.want {
			t.Errorf("%s: value %q, want %q", tc.op, got, tc.want)
		}
	}
}

func TestPointer(t *testing.T) {
	t.Parallel()
	content := map[string]any{"a/b": map[string]any{"~c": []any{"x", int64(1)}}}
	at, s, err := stringAt(content, "/a~1b/~0c/0")
	if err != nil || s != "x" {
		t.Fatalf("stringAt = %q, %v", s, err)
	}
	at.set("y")
	if got := content["a/b"].(map[string]any)["~c"].([]any)[0]; got != "y" {
		t.Errorf("after set: %v", got)
	}
	for _, p := range []string{"", "a", "/missing", "/a~1b/~0c/2", "/a~1b/~0c/-1", "/a~1b/~0c/1", "/a~1b/~0c/0/deeper"} {
		if _, _, err := stringAt(content, p); err == nil {
			t.Errorf("stringAt(%q): no error", p)
		}
	}
}
