package works

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/apis/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/apis/work/v1alpha2"
	"github.com/flotilla-io/flotilla/names"
)

func TestBindingKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		annotations map[string]string
		want        string
		wantOK      bool
	}{
		{"a ResourceBinding's", map[string]string{workv1alpha2.ResourceBindingNamespaceAnnotationKey: "web",
			workv1alpha2.ResourceBindingNameAnnotationKey: "nginx-deployment"}, names.BindingKey("web", "nginx-deployment"), true},
		{"a ClusterResourceBinding's", map[string]string{workv1alpha2.ClusterResourceBindingAnnotationKey: "reader-clusterrole"},
			names.BindingKey("", "reader-clusterrole"), true},
		{"a name without namespace", map[string]string{workv1alpha2.ResourceBindingNameAnnotationKey: "nginx-deployment"}, "", false},
		{"none", nil, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := BindingKey(&workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annotations}})
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("BindingKey = %q, %v; want %q, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
