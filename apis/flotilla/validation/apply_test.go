package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	flotillav1alpha1 "github.com/flotilla-io/flotilla/apis/flotilla/v1alpha1"
)

func TestValidateApplyAnnotations(t *testing.T) {
	t.Parallel()
	p := field.NewPath("metadata", "annotations")
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		want        []string
	}{
		{"none", nil, nil},
		{"every mode", map[string]string{flotillav1alpha1.ApplyModeAnnotation: "IfNotDrifted", flotillav1alpha1.TakeOverAnnotation: "IfNoDiff"}, nil},
		{"an unknown mode", map[string]string{flotillav1alpha1.ApplyModeAnnotation: "Sometimes"},
			[]string{`metadata.annotations[apply.flotilla.io/mode]: Unsupported value: "Sometimes": supported values: "Correct", "ReportOnly", "IfNotDrifted", "CreateOnly", "ServerSideApply"`}},
		{"a mode in lower case", map[string]string{flotillav1alpha1.ApplyModeAnnotation: "reportonly"},
			[]string{`metadata.annotations[apply.flotilla.io/mode]: Unsupported value: "reportonly": supported values: "Correct", "ReportOnly", "IfNotDrifted", "CreateOnly", "ServerSideApply"`}},
		{"an empty take-over", map[string]string{flotillav1alpha1.TakeOverAnnotation: ""},
			[]string{`metadata.annotations[apply.flotilla.io/take-over]: Unsupported value: "": supported values: "Always", "IfNoDiff", "Never"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, e := range ValidateApplyAnnotations(tc.annotations, p) {
				got = append(got, e.Error())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("errors %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("error %q, want %q", got[i], tc.want[i])
				}
			}
		})
	}
}
