package agent

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/apis/generated/clientset/versioned/fake"
)

func TestEnsureCluster(t *testing.T) {
	member := kubefake.NewSimpleClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: "uid-3"}})
	registered := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member3"}, Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Pull, ID: "uid-3"}}
	for name, tc := range map[string]struct {
		existing     []runtime.Object
		endpoint     string
		wantEndpoint string
		wantID       string
	}{
		"registered, no endpoint flag: untouched": {existing: []runtime.Object{registered.DeepCopy()}, wantID: "uid-3"},
		"registered, endpoint not changed":        {existing: []runtime.Object{registered.DeepCopy()}, endpoint: "https://10.0.0.3:6443", wantEndpoint: "", wantID: "uid-3"},
		"not registered: created in Pull mode":    {endpoint: "https://10.0.0.3:6443", wantEndpoint: "https://10.0.0.3:6443", wantID: "uid-3"},
	} {
		karmada := fake.NewSimpleClientset(tc.existing...)
		if err := ensureCluster(context.Background(), karmada, member, "member3", tc.endpoint); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := karmada.ClusterV1alpha1().Clusters().Get(context.Background(), "member3", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Spec.APIEndpoint != tc.wantEndpoint || got.Spec.ID != tc.wantID || got.Spec.SyncMode != clusterv1alpha1.Pull {
			t.Errorf("%s: spec %+v", name, got.Spec)
		}
	}
}
