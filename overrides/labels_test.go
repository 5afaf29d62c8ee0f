package overrides

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/apis/policy/v1alpha1"
)

func TestApplyMetadataMap(t *testing.T) {
	t.Parallel()
	withMeta := func(meta map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}}
	}
	for _, tc := range []struct {
		name    string
		field   string
		meta    map[string]any
		op      policyv1alpha1.OverriderOperator
		value   map[string]string
		want    map[string]any
		wantErr bool
	}{
		{
			name: "add new and existing keys", field: "labels",
			meta: map[string]any{"labels": map[string]any{"app": "nginx"}},
			op:   policyv1alpha1.OverriderOpAdd, value: map[string]string{"app": "web", "tier": "front"},
			want: map[string]any{"labels": map[string]any{"app": "web", "tier": "front"}},
		},
		{
			name: "add creates the map", field: "annotations",
			meta: map[string]any{"name": "x"},
			op:   policyv1alpha1.OverriderOpAdd, value: map[string]string{"app.kubernetes.io/name": "x"},
			want: map[string]any{"name": "x", "annotations": map[string]any{"app.kubernetes.io/name": "x"}},
		},
		{
			name: "add creates metadata", field: "labels",
			meta: nil,
			op:   policyv1alpha1.OverriderOpAdd, value: map[string]string{"a": "b"},
			want: map[string]any{"labels": map[string]any{"a": "b"}},
		},
		{
			name: "replace only existing keys", field: "labels",
			meta: map[string]any{"labels": map[string]any{"app": "nginx"}},
			op:   policyv1alpha1.OverriderOpReplace, value: map[string]string{"app": "web", "tier": "front"},
			want: map[string]any{"labels": map[string]any{"app": "web"}},
		},
		{
			name: "replace without map", field: "labels",
			meta: map[string]any{"name": "x"},
			op:   policyv1alpha1.OverriderOpReplace, value: map[string]string{"app": "web"},
			want: map[string]any{"name": "x"},
		},
		{
			name: "remove ignores value and missing keys", field: "annotations",
			meta: map[string]any{"annotations": map[string]any{"a": "1", "b": "2"}},
			op:   policyv1alpha1.OverriderOpRemove, value: map[string]string{"a": "", "c": ""},
			want: map[string]any{"annotations": map[string]any{"b": "2"}},
		},
		{
			name: "unsupported operator", field: "labels",
			meta: map[string]any{"labels": map[string]any{"app": "nginx"}},
			op:   "move", value: map[string]string{"app": "web"},
			wantErr: true,
		},
		{
			name: "labels not a map", field: "labels",
			meta: map[string]any{"labels": "app=nginx"},
			op:   policyv1alpha1.OverriderOpAdd, value: map[string]string{"app": "web"},
			wantErr: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := withMeta(tc.meta)
			if tc.meta == nil {
				delete(obj.Object, "metadata")
			}
			err := applyMetadataMap(obj, tc.field, &policyv1alpha1.LabelAnnotationOverrider{Operator: tc.op, Value: tc.value})
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, obj.Object["metadata"]); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}
