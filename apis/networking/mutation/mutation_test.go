package mutation

import (
	"testing"

	"github.com/google/uuid"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/apis/networking/v1alpha1"
)

func TestMutateMultiClusterService(t *testing.T) {
	const key = networkingv1alpha1.MultiClusterServicePermanentIDLabel
	for _, tc := range []struct {
		name   string
		labels map[string]string
		create bool
		keep   string // the id expected to stay; "" for a new UUID (create) or none
	}{
		{name: "create: a new id", create: true},
		{name: "create with an id: kept", labels: map[string]string{key: "given"}, create: true, keep: "given"},
		{name: "update: nothing added", create: false},
		{name: "update: id kept", labels: map[string]string{key: "old"}, keep: "old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &networkingv1alpha1.MultiClusterService{}
			m.Labels = tc.labels
			MutateMultiClusterService(m, tc.create)
			got := m.Labels[key]
			switch {
			case tc.keep != "":
				if got != tc.keep {
					t.Errorf("id %q, want %q", got, tc.keep)
				}
			case tc.create:
				if _, err := uuid.Parse(got); err != nil {
					t.Errorf("id %q is not a UUID: %v", got, err)
				}
			case got != "":
				t.Errorf("id %q set on update", got)
			}
		})
	}
}
