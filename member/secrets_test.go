package member

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/apis/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/names"
)

func TestOnlyClusterSecrets(t *testing.T) {
	t.Parallel()
	var asked []string
	get := OnlyClusterSecrets(func(namespace, name string) (*corev1.Secret, error) {
		asked = append(asked, namespace+"/"+name)
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{names.SecretTokenKey: []byte("t")}}, nil
	})
	if _, err := get(names.SecretNamespace, "member1"); err != nil {
		t.Errorf("the cluster namespace: %v", err)
	}
	for _, ns := range []string{"kube-system", "default", ""} {
		if _, err := get(ns, "member1"); err == nil || !strings.Contains(err.Error(), "only in namespace karmada-cluster") {
			t.Errorf("namespace %q: %v, want a refusal", ns, err)
		}
	}
	if len(asked) != 1 {
		t.Errorf("secrets read: %v, want only karmada-cluster/member1", asked)
	}
	// A Cluster written around validation reaches no Secret either.
	c := NewCache(get)
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "stolen"}, Spec: clusterv1alpha1.ClusterSpec{
		SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1",
		SecretRef: &clusterv1alpha1.LocalSecretReference{Namespace: "kube-system", Name: "bootstrap-token-abcdef"}}}
	if _, err := c.Get(cl); err == nil {
		t.Error("a client was built from a Secret outside karmada-cluster")
	}
	if len(asked) != 1 {
		t.Errorf("secrets read: %v", asked)
	}
}
