package member

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
)

func TestPinned(t *testing.T) {
	c := NewCache(nil)
	cl, err := NewClient(&rest.Config{Host: "https://member3.example:6443"})
	if err != nil {
		t.Fatal(err)
	}
	c.Pin("member3", cl)
	pull := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull}}
	got, err := c.Get(pull)
	if err != nil || got != cl {
		t.Fatalf("Get of the pinned cluster = %v, %v", got, err)
	}
	other := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1"}}
	if _, err := c.Get(other); err == nil {
		t.Error("a cluster without secretRef and not pinned got a client")
	}
}
