package validation

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestValidatePlacementReview(t *testing.T) {
	t.Parallel()
	obj := runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap"}`)}
	many := make([]runtime.RawExtension, flotillav1alpha1.MaxReviewObjects+1)
	for i := range many {
		many[i] = obj
	}
	tests := []struct {
		name string
		spec flotillav1alpha1.PlacementReviewSpec
		want string // "" when valid
	}{
		{name: "one object", spec: flotillav1alpha1.PlacementReviewSpec{Objects: []runtime.RawExtension{obj}}},
		{name: "existing ignored", spec: flotillav1alpha1.PlacementReviewSpec{Objects: []runtime.RawExtension{obj}, Existing: flotillav1alpha1.ReviewExistingIgnore}},
		{name: "no objects", want: "spec.objects: Required value"},
		{name: "too many", spec: flotillav1alpha1.PlacementReviewSpec{Objects: many}, want: "spec.objects: Too many"},
		{name: "an empty object", spec: flotillav1alpha1.PlacementReviewSpec{Objects: []runtime.RawExtension{obj, {}}}, want: "spec.objects[1]: Required value"},
		{name: "unknown existing", spec: flotillav1alpha1.PlacementReviewSpec{Objects: []runtime.RawExtension{obj}, Existing: "Sometimes"},
			want: `spec.existing: Unsupported value: "Sometimes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			errs := ValidatePlacementReview(&flotillav1alpha1.PlacementReview{Spec: tc.spec})
			switch {
			case tc.want == "" && len(errs) > 0:
				t.Errorf("errors %v, want none", errs)
			case tc.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
				t.Errorf("errors %v, want one with %q", errs, tc.want)
			}
		})
	}
}
