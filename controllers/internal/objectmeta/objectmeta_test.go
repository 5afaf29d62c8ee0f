package objectmeta

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCovers(t *testing.T) {
	t.Parallel()
	meta := func(labels, annotations map[string]string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{Labels: labels, Annotations: annotations}
	}
	tests := []struct {
		name            string
		stored, desired *metav1.ObjectMeta
		want            bool
	}{
		{"nothing desired", meta(nil, nil), meta(nil, nil), true},
		{"same", meta(map[string]string{"a": "1"}, map[string]string{"b": "2"}), meta(map[string]string{"a": "1"}, map[string]string{"b": "2"}), true},
		{"stored has more", meta(map[string]string{"a": "1", "x": "y"}, map[string]string{"b": "2", "z": ""}), meta(map[string]string{"a": "1"}, map[string]string{"b": "2"}), true},
		{"label missing", meta(nil, nil), meta(map[string]string{"a": "1"}, nil), false},
		{"label differs", meta(map[string]string{"a": "2"}, nil), meta(map[string]string{"a": "1"}, nil), false},
		{"annotation missing", meta(map[string]string{"a": "1"}, nil), meta(map[string]string{"a": "1"}, map[string]string{"b": "2"}), false},
		{"annotation differs", meta(nil, map[string]string{"b": "3"}), meta(nil, map[string]string{"b": "2"}), false},
		{"empty value desired, key absent", meta(nil, nil), meta(map[string]string{"a": ""}, nil), false},
		{"empty value desired and stored", meta(map[string]string{"a": ""}, nil), meta(map[string]string{"a": ""}, nil), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Covers(tc.stored, tc.desired); got != tc.want {
				t.Errorf("Covers = %v, want %v", got, tc.want)
			}
		})
	}
}
