package generated_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/applyconfiguration/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
)

// The generated fake clientset creates and applies, which needs the apply
// configurations' type model built from the OpenAPI schema.
func TestFakeClientsetCreatesAndApplies(t *testing.T) {
	cs := fake.NewClientset()
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push}}
	if _, err := cs.ClusterV1alpha1().Clusters().Create(t.Context(), c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ac := v1alpha1.Cluster("member1").WithSpec(v1alpha1.ClusterSpec().WithRegion("eu"))
	got, err := cs.ClusterV1alpha1().Clusters().Apply(t.Context(), ac, metav1.ApplyOptions{FieldManager: "test", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Region != "eu" {
		t.Errorf("applied region %q", got.Spec.Region)
	}
}
